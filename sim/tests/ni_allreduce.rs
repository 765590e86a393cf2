//! The allreduce engine inside the golden NI, driven only through the
//! register map (driver sequences), between NIs joined by the in-order
//! fabric stub: every rank's result equals the schedule's reference bits,
//! every collective completes exactly once on every rank, with RDMA writes
//! and mailbox messages flowing at the same time.

use exanet_sim::allreduce::engine::FragReject;
use exanet_sim::allreduce::reduce_alu::{ReduceDtype, ReduceOp};
use exanet_sim::allreduce::schedule::{reference, CommBox};
use exanet_sim::ni::driver::{self, Allreduce};
use exanet_sim::ni::fabric::Fabric;
use exanet_sim::ni::regs;
use exanet_sim::ni::{AxilResp, CqEntry, CqKind, CqStatus, Descriptor, Ni, NiParams, Op};
use exanet_sim::packet::coords::Coords;
use exanet_sim::rng::Rng;

const DIMS: [usize; 3] = [3, 2, 2];
const SRC: u64 = 0x10_0000;
const DST: u64 = 0x20_0000;
const SCRATCH: u64 = 0x100_0000;
const SCRATCH_BYTES: u32 = 1 << 20;
/// Channel 0 runs collectives under this PDID.
const AR_PDID: u16 = 0x10;
/// Channel 1 sends RDMA writes and messages under this PDID, into window 0.
const DATA_PDID: u16 = 0x20;
const WIN_BASE: u64 = 0x400_0000;
const WIN_SIZE: u64 = 1 << 20;

fn params() -> NiParams {
    NiParams {
        channels: 2,
        max_payload_bytes: 64,
        mailbox_msg_bytes: 64,
        cq_depth: 8,
        ar_communicators: 3,
        torus_dims: DIMS,
        ..Default::default()
    }
}

fn coords_of(c: [usize; 3]) -> Coords {
    Coords::new(c[0] as u8, c[1] as u8, c[2] as u8, 0).unwrap()
}

fn index_of(c: [usize; 3]) -> usize {
    c[0] + DIMS[0] * (c[1] + DIMS[1] * c[2])
}

fn all_coords() -> Vec<[usize; 3]> {
    let mut v = Vec::new();
    for z in 0..DIMS[2] {
        for y in 0..DIMS[1] {
            for x in 0..DIMS[0] {
                v.push([x, y, z]);
            }
        }
    }
    v
}

/// The boxes: the whole 12-node torus, a 2x2x2 box, a wrapping 3x1x1 ring.
fn boxes() -> Vec<CommBox> {
    vec![
        CommBox::whole(DIMS),
        CommBox {
            origin: [1, 0, 0],
            extent: [2, 2, 2],
        },
        CommBox {
            origin: [2, 1, 1],
            extent: [3, 1, 1],
        },
    ]
}

fn machine() -> Fabric {
    let p = params();
    let mut nodes = Vec::new();
    for c in all_coords() {
        let mut n = Ni::new(&p, coords_of(c)).unwrap();
        driver::set_channel_pdid(&mut n, 0, AR_PDID).unwrap();
        driver::set_channel_pdid(&mut n, 1, DATA_PDID).unwrap();
        driver::set_window(&mut n, 0, WIN_BASE, WIN_SIZE, DATA_PDID).unwrap();
        driver::set_mailbox(&mut n, DATA_PDID, false).unwrap();
        for (k, b) in boxes().iter().enumerate() {
            if let Some(rank) = b.rank_of(c, DIMS) {
                driver::set_communicator(&mut n, k, b, rank, AR_PDID, SCRATCH, SCRATCH_BYTES)
                    .unwrap();
            }
        }
        nodes.push(n);
    }
    Fabric::new(nodes).unwrap()
}

fn run(f: &mut Fabric) {
    for _ in 0..200_000 {
        let moved = f.step();
        for n in f.nodes.iter_mut() {
            n.advance_time(1);
        }
        if !moved && f.idle() {
            return;
        }
    }
    panic!("the fabric never went idle");
}

fn random_elems(rng: &mut Rng, n: usize, dtype: ReduceDtype) -> Vec<u64> {
    let mask = if dtype.bits() == 32 { 0xFFFF_FFFF } else { !0 };
    (0..n)
        .map(|_| match rng.below(10) {
            0 => 0,
            1 => mask,
            _ => rng.next_u64() & mask,
        })
        .collect()
}

fn to_bytes(v: &[u64], esize: usize) -> Vec<u8> {
    v.iter()
        .flat_map(|x| x.to_le_bytes()[..esize].to_vec())
        .collect()
}

#[test]
fn collectives_on_three_boxes_give_every_rank_the_reference_with_traffic_around() {
    let mut f = machine();
    let mut rng = Rng::new(2026);
    let boxes = boxes();
    let ops: Vec<(ReduceOp, ReduceDtype)> = ReduceOp::ALL
        .iter()
        .flat_map(|&o| ReduceDtype::ALL.iter().map(move |&d| (o, d)))
        .filter(|(o, d)| d.supports(*o))
        .collect();
    let nodes = f.nodes.len();
    let mut writes_sent = vec![0usize; nodes];
    for (round, &(op, dtype)) in ops.iter().enumerate() {
        let k = round % boxes.len();
        let b = &boxes[k];
        let n = [1, 5, 16, 17, 130, 600][rng.below(6) as usize];
        let esize = dtype.bits() / 8;
        let threshold = if rng.chance(0.5) { 64 } else { 1 << 16 };
        let txid = round as u16;
        let inputs: Vec<Vec<u64>> = (0..b.ranks())
            .map(|_| random_elems(&mut rng, n, dtype))
            .collect();
        let want = to_bytes(&reference(op, dtype, &inputs).unwrap(), esize);
        for (r, x) in inputs.iter().enumerate() {
            let node = &mut f.nodes[index_of(b.coords_of(r, DIMS))];
            node.axil_write_priv(regs::AR_THRESHOLD, threshold);
            node.mem_mut().write(SRC, &to_bytes(x, esize));
            let a = Allreduce {
                op: op.code() as u32,
                dtype: dtype.code() as u32,
                count: n as u32,
                src: SRC,
                dst: DST,
                comm: k as u32,
                txid,
            };
            assert_eq!(driver::post_allreduce(node, 0, &a), AxilResp::Okay);
        }
        // Background: every node writes to a random other node and sends it a message.
        for i in 0..nodes {
            let to = (i + 1 + rng.below(nodes as u64 - 1) as usize) % nodes;
            let d = Descriptor {
                op: Op::Write,
                laddr: SRC,
                raddr: WIN_BASE + 4096 * i as u64,
                len: 1 + rng.below(300) as u32,
                dest: f.nodes[to].me(),
                notify: false,
                txid: 0x2000 + i as u16,
            };
            assert_eq!(driver::post(&mut f.nodes[i], 1, &d), AxilResp::Okay);
            writes_sent[to] += 1;
            let dest = f.nodes[to].me();
            assert_eq!(
                driver::send_message(&mut f.nodes[i], 1, dest, &[round as u8; 24]),
                AxilResp::Okay
            );
        }
        run(&mut f);
        let mut members = vec![false; nodes];
        for r in 0..b.ranks() {
            let i = index_of(b.coords_of(r, DIMS));
            members[i] = true;
            assert_eq!(
                f.nodes[i].mem().read(DST, n * esize),
                want,
                "round {round}: {} {} n={n} box {k} rank {r}",
                op.name(),
                dtype.name()
            );
        }
        for (i, node) in f.nodes.iter_mut().enumerate() {
            let mut ar = Vec::new();
            let mut writes = 0;
            while let Some(e) = driver::pop_completion(node) {
                match e.kind {
                    CqKind::Allreduce => ar.push(e),
                    CqKind::WriteIn => writes += 1,
                    k => panic!("round {round} node {i}: unexpected {k:?}"),
                }
            }
            let want_ar: Vec<CqEntry> = if members[i] {
                vec![CqEntry {
                    kind: CqKind::Allreduce,
                    status: CqStatus::Ok,
                    reason: 0,
                    txid,
                    peer: node.me(),
                    pdid: AR_PDID,
                }]
            } else {
                vec![]
            };
            assert_eq!(
                ar, want_ar,
                "round {round} node {i}: one completion per member"
            );
            assert_eq!(writes, writes_sent[i], "round {round} node {i}");
            writes_sent[i] = 0;
            while driver::pop_message(node).is_some() {}
            assert_eq!(
                driver::rejections(node, exanet_sim::ni::RejectReason::Stale),
                0
            );
            assert_eq!(node.axil_read_priv(regs::AR_REJ_BASE), 0);
        }
    }
}

#[test]
fn without_an_engine_op_2_is_bad_op_and_fragments_are_unsupported() {
    let p = NiParams {
        ar_communicators: 0,
        ..params()
    };
    let mut n = Ni::new(&p, coords_of([0, 0, 0])).unwrap();
    assert_eq!(n.axil_write_priv(regs::AR_THRESHOLD, 1), AxilResp::SlvErr);
    assert_eq!(
        n.axil_write_priv(regs::ar_comm_reg(0, regs::AR_CTRL), 1 << 31),
        AxilResp::SlvErr
    );
    let a = Allreduce {
        op: 0,
        dtype: 0,
        count: 1,
        src: SRC,
        dst: DST,
        comm: 0,
        txid: 1,
    };
    assert_eq!(driver::post_allreduce(&mut n, 0, &a), AxilResp::SlvErr);
    assert_eq!(n.axil_read(regs::ch_page(0) + regs::CH_ERR), 4, "BAD_OP");
    // A fragment from an engine-equipped neighbour is rejected UNSUPPORTED.
    let mut f = machine();
    let b = &boxes()[0];
    for r in 0..b.ranks() {
        let node = &mut f.nodes[index_of(b.coords_of(r, DIMS))];
        assert_eq!(
            driver::post_allreduce(node, 0, &Allreduce { txid: 9, ..a }),
            AxilResp::Okay
        );
    }
    let pkt = f.nodes[9]
        .emit_packet()
        .expect("rank 9 (an extra of 12 ranks) sends its Pre fragment at once");
    // Rank 9's host is rank 1, at (1, 0, 0).
    let mut plain = Ni::new(&p, coords_of([1, 0, 0])).unwrap();
    assert_eq!(
        plain.receive_packet(&pkt),
        exanet_sim::ni::RxOutcome::Rejected(exanet_sim::ni::RejectReason::Unsupported)
    );
}

#[test]
fn communicator_registers_refuse_bad_slots_and_edits_while_enabled() {
    let mut n = Ni::new(&params(), coords_of([1, 0, 0])).unwrap();
    let b = CommBox::whole(DIMS);
    let reg = |f| regs::ar_comm_reg(1, f);
    // Unprivileged access to the node page is refused.
    assert_eq!(n.axil_write(reg(regs::AR_RANK), 1), AxilResp::SlvErr);
    driver::set_communicator(&mut n, 1, &b, 1, 7, SCRATCH, SCRATCH_BYTES).unwrap();
    assert_eq!(n.axil_read_priv(reg(regs::AR_CTRL)), 7 | 1 << 31);
    assert_eq!(n.axil_read_priv(reg(regs::AR_EXTENT)), 3 | 2 << 8 | 2 << 16);
    assert_eq!(
        n.axil_write_priv(reg(regs::AR_RANK), 2),
        AxilResp::SlvErr,
        "edit while enabled"
    );
    assert_eq!(n.axil_read_priv(reg(regs::AR_RANK)), 1);
    // Each bad setting is refused at the enabling write, naming nothing
    // silently: the slot stays disabled.
    let bad = [
        (
            CommBox {
                origin: [0, 0, 0],
                extent: [4, 1, 1],
            },
            0,
            SCRATCH,
        ),
        (
            CommBox {
                origin: [3, 0, 0],
                extent: [1, 1, 1],
            },
            0,
            SCRATCH,
        ),
        (
            CommBox {
                origin: [0, 0, 0],
                extent: [0, 1, 1],
            },
            0,
            SCRATCH,
        ),
        (b, 12, SCRATCH),
        (b, 0, (1 << 40) - 16),
    ];
    for (i, (bx, rank, scratch)) in bad.iter().enumerate() {
        let e = driver::set_communicator(&mut n, 1, bx, *rank, 7, *scratch, SCRATCH_BYTES);
        assert!(e.is_err(), "case {i}");
        assert_eq!(n.axil_read_priv(reg(regs::AR_CTRL)) >> 31, 0, "case {i}");
    }
    // A descriptor on the disabled slot fails BAD_COMM through the CQ.
    let a = Allreduce {
        op: ReduceOp::Sum.code() as u32,
        dtype: ReduceDtype::U32.code() as u32,
        count: 4,
        src: SRC,
        dst: DST,
        comm: 1,
        txid: 77,
    };
    driver::set_channel_pdid(&mut n, 0, 7).unwrap();
    assert_eq!(driver::post_allreduce(&mut n, 0, &a), AxilResp::Okay);
    let e = driver::pop_completion(&mut n).unwrap();
    assert_eq!(
        (e.kind, e.status, e.reason, e.txid),
        (CqKind::Allreduce, CqStatus::Failed, 1, 77)
    );
    // Enabled again, but the channel's PDID differs: BAD_COMM too; with
    // the right PDID and this node's rank wrong: NOT_MEMBER.
    driver::set_communicator(&mut n, 1, &b, 1, 8, SCRATCH, SCRATCH_BYTES).unwrap();
    assert_eq!(driver::post_allreduce(&mut n, 0, &a), AxilResp::Okay);
    assert_eq!(driver::pop_completion(&mut n).unwrap().reason, 1);
    driver::set_communicator(&mut n, 1, &b, 2, 7, SCRATCH, SCRATCH_BYTES).unwrap();
    assert_eq!(driver::post_allreduce(&mut n, 0, &a), AxilResp::Okay);
    assert_eq!(driver::pop_completion(&mut n).unwrap().reason, 2);
    assert_eq!(n.mem().pages(), Vec::<u64>::new(), "nothing written");
}

#[test]
fn a_missing_rank_times_the_others_out_through_the_cq_and_the_next_collective_works() {
    let mut f = machine();
    let b = &boxes()[2]; // the 3-ring
    for n in f.nodes.iter_mut() {
        n.axil_write_priv(regs::AR_TIMEOUT, 2000);
    }
    let a = Allreduce {
        op: ReduceOp::Sum.code() as u32,
        dtype: ReduceDtype::F64.code() as u32,
        count: 10,
        src: SRC,
        dst: DST,
        comm: 2,
        txid: 5,
    };
    let ranks: Vec<usize> = (0..3).map(|r| index_of(b.coords_of(r, DIMS))).collect();
    // Rank 0 stays away: it is the host of rank 2 and partner of rank 1.
    for &i in &ranks[1..] {
        assert_eq!(
            driver::post_allreduce(&mut f.nodes[i], 0, &a),
            AxilResp::Okay
        );
    }
    run(&mut f);
    for _ in 0..2100 {
        for n in f.nodes.iter_mut() {
            n.advance_time(1);
        }
    }
    for &i in &ranks[1..] {
        let e = driver::pop_completion(&mut f.nodes[i]).unwrap();
        assert_eq!((e.status, e.reason), (CqStatus::Failed, 7), "TIMEOUT");
    }
    // Rank 0 now posts collective 5 alone: what it receives was sent to the
    // abandoned collective... it times out in turn (its fragments are stale).
    assert_eq!(
        driver::post_allreduce(&mut f.nodes[ranks[0]], 0, &a),
        AxilResp::Okay
    );
    run(&mut f);
    for _ in 0..2100 {
        for n in f.nodes.iter_mut() {
            n.advance_time(1);
        }
    }
    let e = driver::pop_completion(&mut f.nodes[ranks[0]]).unwrap();
    assert_eq!(e.kind, CqKind::Allreduce);
    let stale: u32 = ranks[1..]
        .iter()
        .map(|&i| f.nodes[i].axil_read_priv(regs::AR_REJ_BASE + 4 * FragReject::Stale as u32))
        .sum();
    assert!(stale > 0, "rank 0's late fragments are stale at the others");
    // Everyone on the next collective: OK, right bits.
    let x: Vec<f64> = vec![1.5, -2.25, 3.0];
    for (r, &i) in ranks.iter().enumerate() {
        let v: Vec<u8> = (0..10)
            .flat_map(|j| (x[r] * (j as f64 + 1.0)).to_le_bytes())
            .collect();
        f.nodes[i].mem_mut().write(SRC, &v);
        assert_eq!(
            driver::post_allreduce(&mut f.nodes[i], 0, &Allreduce { txid: 6, ..a }),
            AxilResp::Okay
        );
    }
    run(&mut f);
    for &i in &ranks {
        let e = driver::pop_completion(&mut f.nodes[i]).unwrap();
        assert_eq!((e.status, e.txid), (CqStatus::Ok, 6));
        let got = f.nodes[i].mem().read(DST, 80);
        for j in 0..10 {
            let y = f64::from_le_bytes(got[8 * j..8 * j + 8].try_into().unwrap());
            // (x0 + x2) + x1, each times (j + 1): exact in binary64.
            assert_eq!(y, (1.5 + 3.0 - 2.25) * (j as f64 + 1.0));
        }
    }
}
