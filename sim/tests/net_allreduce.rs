//! Allreduce over the timed network (golden NIs on golden routers and
//! framed links): every rank's result equals the reference bits, hardware
//! and software; software latency grows linearly with its per-message
//! overhead; hardware latency grows with the rank count.

use exanet_sim::allreduce::reduce_alu::{ReduceDtype, ReduceOp};
use exanet_sim::allreduce::schedule::CommBox;
use exanet_sim::network::collective::{run_allreduce, ArMode, ArParams, ArReport};
use exanet_sim::network::{FramedLinks, LinkKeys, NetworkParams, Workload};
use exanet_sim::router::RouterParams;
use exanet_sim::topology::Topology;
use exanet_sim::traffic::{PacketSizes, Pattern};

fn keys() -> LinkKeys {
    LinkKeys {
        gbps: 10.0,
        latency_ns: 100.0,
        model: "framed".into(),
        frame_flits: 0,
        ber: 0.0,
        burst_rate: 0.0,
        burst_bits: 16,
        down: vec![],
        down_nodes: vec![],
    }
}

fn network(dims: [usize; 3], rate: f64) -> NetworkParams {
    let wrap = dims.map(|d| d > 1);
    let router = RouterParams {
        topology: Topology::new(dims, wrap, 1).unwrap(),
        ..Default::default()
    };
    let nodes = router.topology.num_nodes();
    let links = FramedLinks::from_keys(
        &keys(),
        router.flit_bits,
        router.num_vcs(),
        router.buffer_flits,
        16,
        156.25,
        nodes,
        7,
    )
    .unwrap();
    NetworkParams {
        router,
        link_latency: 16,
        links,
        workload: Workload::Synthetic {
            pattern: Pattern::Uniform,
            rate,
            sizes: PacketSizes::Fixed { bytes: 256 },
            class1_fraction: 0.0,
        },
        warmup: 0,
        window: 1,
        drain_max: 100_000,
        watchdog: 10_000,
        order_check: true,
        source_queue_limit: 16,
        check_deadlock: false,
        seed: 3,
    }
}

fn ar(mode: ArMode, op: ReduceOp, dtype: ReduceDtype, count: usize, comm: CommBox) -> ArParams {
    ArParams {
        mode,
        op,
        dtype,
        count,
        comm,
        repetitions: 2,
        threshold: 1024,
        ni_tx_cycles: 32,
        ni_rx_cycles: 16,
        tx_ahead: 8,
        host_cycles: 74,
        reduce_cycles_per_element: 0.3,
        max_cycles: 2_000_000,
        seed: 11,
    }
}

fn check(r: &ArReport, what: &str) {
    assert!(
        r.clean(),
        "{what}: {:?} {:?}",
        r.errors,
        r.background_errors
    );
    assert_eq!(r.checked, r.ranks * r.latency.len(), "{what}");
    assert!(r.latency.iter().all(|&l| l > 0), "{what}: {:?}", r.latency);
}

#[test]
fn every_rank_gets_the_reference_bits_hardware_and_software() {
    let net = network([4, 2, 2], 0.0);
    let boxes = [
        CommBox::whole([4, 2, 2]),
        CommBox {
            origin: [3, 1, 0],
            extent: [3, 1, 2],
        },
    ];
    let cases = [
        (ReduceOp::Sum, ReduceDtype::F64, 1),
        (ReduceOp::Sum, ReduceDtype::F32, 300),
        (ReduceOp::Max, ReduceDtype::I32, 1000),
        (ReduceOp::Bxor, ReduceDtype::U64, 17),
    ];
    for (i, &(op, dtype, count)) in cases.iter().enumerate() {
        let comm = boxes[i % 2];
        for mode in [ArMode::Hardware, ArMode::Software] {
            let r = run_allreduce(&net, &ar(mode, op, dtype, count, comm)).unwrap();
            check(
                &r,
                &format!("{mode:?} {op:?} {dtype:?} x{count} on {comm:?}"),
            );
        }
    }
}

#[test]
fn dbg_small() {
    let net = network([4, 2, 2], 0.0);
    for mode in [ArMode::Hardware, ArMode::Software] {
        let comm = CommBox {
            origin: [3, 1, 0],
            extent: [3, 1, 2],
        };
        let mut p = ar(mode, ReduceOp::Sum, ReduceDtype::F32, 300, comm);
        p.max_cycles = 20_000;
        let r = run_allreduce(&net, &p);
        eprintln!("{mode:?}: {r:?}");
    }
}
