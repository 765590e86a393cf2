//! Co-simulation of `node-pair`: two NIs joined by two RTL routers against
//! two golden NIs exchanging the same packets; one passing run with its
//! coverage (RDMA writes and reads, reads refused and posted again,
//! messages, both message classes, Busy, a reset in the middle of traffic)
//! and latency figures, and two faulty golden sides (another
//! window PDID; one memory byte) that the checks must catch; the passing
//! run's NI event traces written as a dump and decoded. One Verilator
//! build: the fault runs use the same RTL (the build cache hits).

use exanet_sim::ni::trace;
use exanet_tb::blocks::node_pair::{
    allreduce_points, info, matrix_points, parse_point, Fault, NodePairBench,
};
use exanet_tb::cosim::{run, skip_without_verilator, test_options, CosimOptions};

/// Cycles of the passing run (`exanet cosim node-pair --cycles N` runs longer).
const CYCLES: u64 = 60_000;

/// Seed of every run but the two-node one's.
const SEED: u64 = 7;

/// Seed of the two-node run and its fault runs: its coverage asserts want
/// reads refused by a full read queue, which seed 7 stopped drawing when
/// the NIs' set-up gained the trace and allreduce register writes, and
/// seed 2 when software gained the writes to absent endpoints and the
/// read-back after resets, seed 8 when it gained the accesses to be
/// rejected and the receiver stalls (seeds 1..=12 at 60,000 cycles: 0 to
/// 7 refused reads; seed 9: 7, re-posted and completed).
const PAIR_SEED: u64 = 9;

/// The options of a run: no traced rebuild on a mismatch (only the
/// mismatch matters here).
fn opts(cycles: u64, fail_dir: &std::path::Path) -> CosimOptions {
    CosimOptions {
        waveform_on_mismatch: false,
        ..test_options(cycles, SEED, fail_dir)
    }
}

/// [`opts`] with [`PAIR_SEED`].
fn pair_opts(cycles: u64, fail_dir: &std::path::Path) -> CosimOptions {
    CosimOptions {
        seed: PAIR_SEED,
        ..opts(cycles, fail_dir)
    }
}

#[test]
fn bad_points_are_errors() {
    let e = parse_point("dims=1x1x1").unwrap_err().to_string();
    assert!(e.contains("dims"), "{e}");
    let e = parse_point("dims=2x1").unwrap_err().to_string();
    assert!(e.contains("AxBxC"), "{e}");
    let e = parse_point("colour=3").unwrap_err().to_string();
    assert!(e.contains("colour"), "{e}");
    let e = parse_point("max_payload_bytes=48").unwrap_err().to_string();
    assert!(e.contains("max_payload"), "{e}");
}

/// The second matrix point: four NIs on a 2x2 torus of RTL routers (paths
/// of one and two hops, every node sending to every other), longer links,
/// 128-byte packets and small queues, NIs with the allreduce engine. The
/// suite's multi-node allreduce sample: random allreduces (every op and
/// dtype, 1 element to multi-packet vectors, communicators of 4, 2, 4 and
/// 1 ranks) while RDMA writes, reads and messages flow; every completion
/// once, its destination equal to the reference result on every rank,
/// every memory equal to the golden model's at the drains. (30 000
/// cycles: the first drain follows a reset phase and a phase with a
/// completion queue held.)
#[test]
fn four_nodes_on_a_torus_match_golden() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = parse_point(matrix_points()[1]).unwrap();
    assert_eq!(p.router.topology.num_nodes(), 4);
    let mut bench = NodePairBench::new(p).unwrap();
    let r = run(&mut bench, &opts(30_000, tmp.path())).unwrap();
    println!("{}", r.summary());
    assert_eq!(r.mismatches, 0, "{:?}", r.first);
    let c = bench.coverage();
    println!("  {c:?}");
    assert!(c.drains >= 1, "{c:?}");
    assert!(
        c.rdma_writes > 20 && c.multi_packet > 3 && c.messages > 20 && c.rdma_reads > 5,
        "{c:?}"
    );
    assert!(c.refused_full > 0 && c.delivered > 100, "{c:?}");
    // Responses decided before requests delivered earlier (class 1 first).
    assert!(c.class1_first > 0, "{c:?}");
    // Collectives of the whole torus among those checked on every rank.
    assert!(
        c.ar_done >= 3 && c.ar_by_ranks.get(&4).is_some_and(|&k| k >= 1),
        "{c:?}"
    );
    assert!(c.ar_checked >= 4 && c.ar_fragments > 20, "{c:?}");
    assert!(
        c.ar_frags_accepted > 0 && c.ar_frags_accepted <= c.ar_fragments,
        "{c:?}"
    );
}

#[test]
fn node_pair_matches_golden_and_faults_are_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    assert_eq!((info().matrix)().len(), matrix_points().len());
    let p = parse_point(matrix_points()[0]).unwrap();

    // The real comparison.
    let mut bench = NodePairBench::new(p.clone()).unwrap();
    let r = run(&mut bench, &pair_opts(CYCLES, tmp.path())).unwrap();
    println!("{}", r.summary());
    assert_eq!(r.mismatches, 0, "{:?}", r.first);
    let c = bench.coverage();
    let f = bench.figures();
    println!("  {c:?}\n  {}", f.summary());
    assert!(
        c.drains >= 1,
        "at least one drain with the memory comparison: {c:?}"
    );
    assert!(
        c.rdma_writes > 20 && c.multi_packet > 3 && c.sends > 20,
        "{c:?}"
    );
    assert!(c.write_in > 20 && c.notify > 5 && c.messages > 20, "{c:?}");
    // RDMA reads between the nodes: READ_DONE at the requester (and
    // NOTIFY at the server, counted above).
    assert!(c.rdma_reads > 5 && c.read_done > 5, "{c:?}");
    assert!(
        c.tx_packets.iter().all(|&k| k > 0),
        "RdmaWrite, Mailbox, MailboxAck, MailboxNack (full, resent), RdmaCompletion, \
         RdmaReadReq, RdmaReadResp: {c:?}"
    );
    // A completion queue left alone filled up: Busy, confirmed by the
    // golden model; and a reset pulse in the middle of traffic.
    assert!(c.cq_holds >= 1 && c.busy_checks > 0, "{c:?}");
    assert!(c.mid_resets >= 1 && c.drains_after_reset >= 1, "{c:?}");
    // After the reset, every configured register read back (reset values).
    assert!(c.reset_readbacks >= 100, "{c:?}");
    // RDMA writes to an absent endpoint (an fpga no router has): each
    // packet dropped by the router of its coordinates, counted there.
    assert!(c.absent_writes >= 2 && c.absent_packets >= 2, "{c:?}");
    assert!(c.refused_full > 0 && c.refused > 0, "{c:?}");
    // Writes and reads the receiving NI must reject (no window, or a
    // window of another PDID): rejected for their reason, each error-queue
    // entry read whole (compared with the golden model's registers and
    // with the packet sent), READ_DONE / REMOTE_DENIED at the requester.
    assert!(c.reject_writes >= 2 && c.reject_reads >= 2, "{c:?}");
    assert!(c.rejected >= 4 && c.errq_entries >= 4, "{c:?}");
    assert!(c.read_denied >= 1, "{c:?}");
    // Both receiver stalls: the buffers towards the stalled node filled
    // (class 1: more NOTIFY responses in flight than the ejection
    // adapter's VC buffer and the NI's class-1 ring hold, 16 + 8).
    assert_eq!(c.stalls, 2, "{c:?}");
    assert!(
        c.stall_class0_peak >= 8 && c.stall_class1_peak >= 25,
        "{c:?}"
    );
    // Reads refused by a full read queue (Nack READ_BUSY): software saw
    // READ_DONE / REMOTE_DENIED / READ_BUSY and posted them again (each
    // then completed, or was lost to a reset); class-1 packets decided
    // before class-0 packets delivered earlier.
    assert!(
        c.refused_reads > 0 && c.read_busy_seen > 0 && c.read_reposts > 0,
        "{c:?}"
    );
    assert!(
        c.read_busy_seen <= c.refused_reads && c.read_reposts <= c.read_busy_seen,
        "{c:?}"
    );
    assert!(c.class1_first > 0, "{c:?}");
    assert!(c.delivered > 100 && c.axi_writes > 20, "{c:?}");
    assert_eq!(f.write_64b.len(), 4, "{f:?}");
    assert_eq!(f.pkt_16b.len(), 4, "{f:?}");
    assert!(f.write_64b.iter().all(|&l| l > 5) && f.pkt_16b.iter().all(|&l| l > 5));
    // The NIs' event trace rings as a dump (to EXANET_TRACE_DUMP when set,
    // for `exanet trace decode FILE`), decoded into per-transaction
    // timelines: both nodes' rings are full (the run outlasts them), and
    // some transfer shows events of both nodes.
    let dump = bench.trace_dump();
    let path = std::env::var_os("EXANET_TRACE_DUMP")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| tmp.path().join("node_pair.trace"));
    std::fs::write(&path, &dump).unwrap();
    let sections = trace::parse_dump(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let depth = p.ni.ni.trace_depth;
    assert_eq!(sections.len(), 2);
    assert!(sections.iter().all(|(_, e)| e.len() == depth), "{dump}");
    let t = trace::timeline(&sections);
    println!("{t}");
    assert!(
        t.starts_with(&format!("{} events, 2 node(s)", 2 * depth)),
        "{t}"
    );
    assert!(
        t.split("\n\n")
            .any(|tx| tx.contains("[n0]") && tx.contains("[n1]")),
        "no transaction seen at both nodes:\n{t}"
    );

    // A golden model with another window PDID at node 1: its data packets
    // are rejected by the golden model only.
    let mut bad = NodePairBench::with_fault(p.clone(), Fault::GoldenWindowPdid).unwrap();
    let r = run(&mut bad, &pair_opts(CYCLES, tmp.path())).unwrap();
    let m = r.first.expect("a wrong window PDID is caught");
    println!("fault window PDID: {m}");
    assert!(m.port.starts_with("n1_"), "{m}");

    // One golden memory byte no transfer writes: caught by the drain's
    // byte-for-byte comparison only.
    let mut bad = NodePairBench::with_fault(p, Fault::GoldenMemByte).unwrap();
    let r = run(&mut bad, &pair_opts(CYCLES, tmp.path())).unwrap();
    let m = r.first.expect("a wrong memory byte is caught");
    println!("fault memory byte: {m}");
    assert!(m.port.contains("n1 memory byte 0x8000ffff"), "{m}");
    assert_eq!((m.expected.as_str(), m.actual.as_str()), ("0x5a", "0x0"));
}

/// Eight NIs with the allreduce engine on a 2x2x2 torus of RTL routers
/// (communicators of 8, 4, 2 and 1 ranks): random allreduces (every op and
/// dtype, 1 element to multi-packet vectors) while RDMA writes, reads and
/// messages flow; every completion once with status OK and its destination
/// equal to the reference result on every rank, every memory equal to the
/// golden model's at the drain. A short sample (eight Verilated nodes run
/// at a few thousand cycles per second under load): one traffic phase of
/// 2000 cycles and its drain, no reset pulse; the `#[ignore]`d runs below
/// go longer, with reset pulses in the middle of collectives. Out of the
/// suite: the model is twice the four-node one's C++ (about 900,000
/// lines), and the suite's multi-node allreduce sample is the four-node
/// run.
#[test]
#[ignore = "eight Verilated nodes: a build of minutes"]
fn allreduce_on_a_2x2x2_torus_matches_golden() {
    if skip_without_verilator() {
        return;
    }
    let c = allreduce_run(0, AR_CI_CYCLES, SEED, 2_000, false);
    assert!(c.drains >= 1, "{c:?}");
    assert!(
        c.ar_done >= 3 && c.ar_by_ranks.get(&8).is_some_and(|&k| k >= 1),
        "{c:?}"
    );
    assert!(c.ar_checked >= 8 && c.ar_fragments > 20, "{c:?}");
    assert!(
        c.ar_frags_accepted > 0 && c.ar_frags_accepted <= c.ar_fragments,
        "{c:?}"
    );
    assert!(c.rdma_writes > 5 && c.messages > 5, "{c:?}");
}

/// A wrong reference result (first byte flipped) is caught by the result
/// check at the first allreduce completion read, naming the rank and
/// element (the RTL and the golden model agree; only this check sees it).
#[test]
fn a_wrong_allreduce_reference_is_caught() {
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let p = parse_point(matrix_points()[1]).unwrap();
    assert!(p.ni.ni.ar_communicators > 0);
    let mut bad = NodePairBench::with_fault(p, Fault::ArReference)
        .unwrap()
        .with_latency_samples(0)
        .with_phase_cap(2_000)
        .without_mid_resets();
    let r = run(&mut bad, &opts(AR_CI_CYCLES, tmp.path())).unwrap();
    let m = r.first.expect("a wrong reference is caught");
    println!("fault allreduce reference: {m}");
    assert!(
        m.port.contains("allreduce result") && m.port.contains("element 0"),
        "{m}"
    );
}

/// Cycles of the CI sample.
const AR_CI_CYCLES: u64 = 12_000;

/// Longer runs of point `k`, `cycles` per seed, reset pulses in the
/// middle of traffic (collectives cut short on every rank): no mismatch in
/// any; over the seeds, every op, dtype and communicator (rank count).
fn allreduce_long(k: usize, seeds: &[u64], cycles: u64) {
    if skip_without_verilator() {
        return;
    }
    let mut all = exanet_tb::blocks::node_pair::NodePairCoverage::default();
    for &s in seeds {
        let c = allreduce_run(k, cycles, s, 12_000, true);
        assert!(c.drains >= 1 && c.mid_resets >= 1, "{c:?}");
        assert!(
            c.ar_done >= 10 && c.ar_checked + c.ar_lost <= c.ar_posted,
            "{c:?}"
        );
        assert!(
            c.ar_frags_accepted > 0 && c.rdma_writes > 20 && c.messages > 20,
            "{c:?}"
        );
        all.ar_done += c.ar_done;
        all.ar_one_element += c.ar_one_element;
        all.ar_multi_packet += c.ar_multi_packet;
        all.ar_large_schedule += c.ar_large_schedule;
        for i in 0..6 {
            all.ar_by_op[i] += c.ar_by_op[i];
            all.ar_by_dtype[i] += c.ar_by_dtype[i];
        }
        for (r, n) in c.ar_by_ranks {
            *all.ar_by_ranks.entry(r).or_default() += n;
        }
    }
    println!("over the seeds: {all:?}");
    assert!(all.ar_by_op.iter().all(|&k| k > 0), "{all:?}");
    assert!(all.ar_by_dtype.iter().all(|&k| k > 0), "{all:?}");
    assert!(
        all.ar_one_element > 0 && all.ar_multi_packet > 0 && all.ar_large_schedule > 0,
        "{all:?}"
    );
    // Every communicator's collectives ran.
    assert_eq!(all.ar_by_ranks.len(), 4, "{all:?}");
}

#[test]
#[ignore = "long: eight Verilated nodes, 3 x 40 000 cycles"]
fn allreduce_2x2x2_long() {
    allreduce_long(0, &[1, 2, 3], 40_000);
}

/// Six nodes on a 3x2x1 torus: communicators of 6, 3, 4 and 1 ranks (the
/// pre and post steps of a rank count that is not a power of two; boxes
/// wrapping round the torus).
#[test]
#[ignore = "long: six Verilated nodes, 3 x 60 000 cycles"]
fn allreduce_3x2x1_long() {
    allreduce_long(1, &[1, 2, 3], 60_000);
}

/// Run allreduce point `k` for `cycles` with `seed` (traffic phases of at
/// most `cap` cycles, `resets`: reset pulses in the middle of traffic); no
/// mismatch; the coverage.
fn allreduce_run(
    k: usize,
    cycles: u64,
    seed: u64,
    cap: u64,
    resets: bool,
) -> exanet_tb::blocks::node_pair::NodePairCoverage {
    let tmp = tempfile::tempdir().unwrap();
    let p = parse_point(allreduce_points()[k]).unwrap();
    let mut bench = NodePairBench::new(p)
        .unwrap()
        .with_latency_samples(0)
        .with_phase_cap(cap);
    if !resets {
        bench = bench.without_mid_resets();
    }
    let o = CosimOptions {
        seed,
        ..opts(cycles, tmp.path())
    };
    let r = run(&mut bench, &o).unwrap();
    println!("{}", r.summary());
    let c = bench.coverage();
    println!("  {c:?}\n  pending: {}", bench.pending());
    assert_eq!(r.mismatches, 0, "{:?}", r.first);
    c
}

/// RTL allreduce latency on the 2x2x2 point (f64 sum, 2, 4 and 8 ranks,
/// 8 B .. 64 KiB, AR_THRESHOLD 4096): a quiet bench (set-up, then one
/// collective at a time, nothing else), memory at a fixed 15-cycle
/// latency (100 ns at 156.25 MHz, `reproduce.mem_latency_ns`), every
/// check on. Cycles from the first member's DOORBELL to the last member's
/// completion. Printed (`--nocapture`); BENCHMARKS.md has the table.
#[test]
#[ignore = "a measurement: eight Verilated nodes, minutes"]
fn allreduce_latency_rtl() {
    use exanet_tb::blocks::node_pair::{measure_ar_latency, ArLatencyPlan};
    if skip_without_verilator() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let sizes: Vec<u64> = std::env::var("EXANET_AR_SIZES")
        .ok()
        .map(|s| s.split(',').map(|v| v.trim().parse().unwrap()).collect())
        .unwrap_or_else(|| vec![8, 256, 4096, 65536]);
    let mut items = Vec::new();
    for &b in &sizes {
        // Slot 2: 2 ranks, slot 1: 4, slot 0: 8 (the point's boxes).
        for k in [2, 1, 0] {
            items.push((k, b));
        }
    }
    let p = parse_point(allreduce_points()[0]).unwrap();
    let mut bench = NodePairBench::new(p)
        .unwrap()
        .with_fixed_memory(15)
        .with_ar_latency(ArLatencyPlan { items, samples: 2 })
        .unwrap();
    let s = measure_ar_latency(&mut bench, &opts(0, tmp.path()), 5_000_000).unwrap();
    println!("| bytes | ranks | cycles (each sample) | first..last DOORBELL |");
    println!("|---|---|---|---|");
    for w in s.chunks(2) {
        println!(
            "| {} | {} | {} | {} |",
            w[0].bytes,
            w[0].ranks,
            w.iter()
                .map(|x| x.cycles().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            w.iter()
                .map(|x| (x.last_doorbell - x.first_doorbell).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(w.iter().all(|x| x.cycles() > 0));
    }
}
