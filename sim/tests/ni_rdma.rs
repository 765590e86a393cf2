//! NI golden model: random RDMA writes and reads between NIs joined by the
//! in-order fabric stub. Final memory of every node equals an independent
//! reference byte for byte; every completion is seen exactly once; the
//! packet count matches the segmentation formula.

use exanet_sim::ni::driver;
use exanet_sim::ni::fabric::Fabric;
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::rdma_tx::packet_count;
use exanet_sim::ni::regs::cnt;
use exanet_sim::ni::{
    AxilResp, CqEntry, CqKind, CqStatus, Descriptor, Ni, NiParams, Op, SparseMemory,
};
use exanet_sim::packet::coords::Coords;
use exanet_sim::rng::Rng;

/// Channel c owns region c of 2^34 bytes: sources at its start, landing
/// areas from DEST_OFF; window c covers it with PDID `pdid(c)`.
const REGION_BITS: u32 = 34;
const SRC_BYTES: u64 = 3 << 20;
const DEST_OFF: u64 = 1 << 33;

fn region(c: usize) -> u64 {
    (c as u64) << REGION_BITS
}

fn pdid(c: usize) -> u16 {
    0x100 + c as u16
}

fn coords(i: usize) -> Coords {
    Coords::new(i as u8 % 4, i as u8 / 4, 1, (i % 2) as u8).unwrap()
}

fn node(p: &NiParams, i: usize, rng: &mut Rng) -> Ni {
    let mut n = Ni::new(p, coords(i)).unwrap();
    for c in 0..p.channels {
        driver::set_channel_pdid(&mut n, c, pdid(c)).unwrap();
        driver::set_window(&mut n, c, region(c), 1 << REGION_BITS, pdid(c)).unwrap();
        let mut buf = vec![0u8; SRC_BYTES as usize];
        for chunk in buf.chunks_mut(8) {
            chunk.copy_from_slice(&rng.next_u64().to_le_bytes()[..chunk.len()]);
        }
        n.mem_mut().write(region(c), &buf);
    }
    n
}

/// Lengths: mostly up to 700 B, some tiny, some up to 20 KB; with `big`,
/// op 37 and every 150th after it moves just over 1 MiB.
fn pick_len(rng: &mut Rng, k: usize, big: bool) -> u32 {
    let r = rng.below(1000);
    if big && k % 150 == 37 {
        (1 << 20) + rng.below(600) as u32
    } else if r < 120 {
        1 + rng.below(20_000) as u32
    } else if r < 200 {
        1 + rng.below(16) as u32
    } else {
        1 + rng.below(700) as u32
    }
}

struct Plan {
    /// (node, channel, descriptor)
    ops: Vec<(usize, usize, Descriptor)>,
    reference: Vec<SparseMemory>,
    expected: Vec<(usize, CqEntry)>,
    packets: u64,
}

fn plan(nodes: &[Ni], p: &NiParams, ops: usize, loopback: bool, big: bool, rng: &mut Rng) -> Plan {
    let n = nodes.len();
    let mut reference: Vec<SparseMemory> = nodes.iter().map(|x| x.mem().clone()).collect();
    let mut next_dest = vec![vec![0u64; p.channels]; n];
    let mut plan = Plan {
        ops: Vec::new(),
        reference: Vec::new(),
        expected: Vec::new(),
        packets: 0,
    };
    let pm = p.max_payload_bytes;
    for k in 0..ops {
        let s = rng.below(n as u64) as usize;
        let t = if n == 1 || (loopback && rng.chance(0.15)) {
            s
        } else {
            (s + 1 + rng.below(n as u64 - 1) as usize) % n
        };
        let c = rng.below(p.channels as u64) as usize;
        let len = pick_len(rng, k, big);
        let src = region(c) + rng.below(SRC_BYTES - len as u64 + 1);
        let op = if rng.chance(0.5) { Op::Write } else { Op::Read };
        let notify = rng.chance(0.5);
        let txid = k as u16;
        // The landing node and its fresh area.
        let land_node = if op == Op::Write { t } else { s };
        let slot = &mut next_dest[land_node][c];
        *slot += rng.below(300);
        let land = region(c) + DEST_OFF + *slot;
        *slot += len as u64;
        let (data_node, land_pkts) = (
            if op == Op::Write { s } else { t },
            packet_count(land, len as u64, pm),
        );
        let bytes = nodes[data_node].mem().read(src, len as usize);
        reference[land_node].write(land, &bytes);
        let (laddr, raddr) = if op == Op::Write {
            (src, land)
        } else {
            (land, src)
        };
        plan.ops.push((
            s,
            c,
            Descriptor {
                op,
                laddr,
                raddr,
                len,
                dest: coords(t),
                notify,
                txid,
            },
        ));
        let e = |kind, peer| CqEntry {
            kind,
            status: CqStatus::Ok,
            reason: 0,
            txid,
            peer: coords(peer),
            pdid: pdid(c),
        };
        match op {
            Op::Write => {
                plan.expected.push((t, e(CqKind::WriteIn, s)));
                if notify {
                    plan.expected.push((s, e(CqKind::Notify, t)));
                }
            }
            Op::Read => {
                plan.expected.push((s, e(CqKind::ReadDone, t)));
                if notify {
                    plan.expected.push((t, e(CqKind::Notify, s)));
                }
                plan.packets += 1; // the request
            }
        }
        plan.packets += land_pkts + notify as u64;
    }
    plan.reference = reference;
    plan.expected.sort();
    plan
}

/// Post every op as channel space allows, drain completions at random
/// moments (so full completion queues make receivers Busy), run to idle.
fn run(p: &NiParams, n: usize, ops: usize, loopback: bool, big: bool, seed: u64) {
    let mut rng = Rng::new(seed);
    let nodes: Vec<Ni> = (0..n).map(|i| node(p, i, &mut rng)).collect();
    let plan = plan(&nodes, p, ops, loopback, big, &mut rng);
    let mut fab = Fabric::new(nodes).unwrap();
    fab.inject = 1 + rng.below(2) as usize;
    let mut got: Vec<(usize, CqEntry)> = Vec::new();
    let mut next = 0;
    let mut steps = 0u64;
    // Reads the server refused with its read queue full (READ_DONE,
    // REMOTE_DENIED, reason READ_BUSY): software posts them again.
    let mut retry: Vec<(usize, usize, Descriptor)> = Vec::new();
    let mut retried = 0u64;
    let mut take = |i: usize, e: CqEntry, retry: &mut Vec<(usize, usize, Descriptor)>| {
        if e.kind == CqKind::ReadDone
            && e.status == CqStatus::RemoteDenied
            && e.reason == NACK_READ_BUSY
        {
            let op = plan
                .ops
                .iter()
                .find(|(s, _, d)| *s == i && d.txid == e.txid)
                .expect("a refused read is one of the plan's");
            retry.push(*op);
            retried += 1;
        } else {
            got.push((i, e));
        }
    };
    loop {
        // Software: a refused read again, else the next op, when its
        // channel has room.
        if let Some(&(s, c, d)) = retry.first() {
            if driver::desc_free(&fab.nodes[s], c) > 0 && rng.chance(0.6) {
                assert_eq!(driver::post(&mut fab.nodes[s], c, &d), AxilResp::Okay);
                retry.remove(0);
            }
        }
        for _ in 0..2 {
            if next < plan.ops.len() && rng.chance(0.6) {
                let (s, c, d) = plan.ops[next];
                if driver::desc_free(&fab.nodes[s], c) > 0 {
                    assert_eq!(driver::post(&mut fab.nodes[s], c, &d), AxilResp::Okay);
                    next += 1;
                }
            }
        }
        for (i, node) in fab.nodes.iter_mut().enumerate() {
            if rng.chance(0.3) {
                while let Some(e) = driver::pop_completion(node) {
                    take(i, e, &mut retry);
                }
            }
        }
        fab.step();
        steps += 1;
        if next == plan.ops.len() && retry.is_empty() && fab.idle() {
            for (i, node) in fab.nodes.iter_mut().enumerate() {
                while let Some(e) = driver::pop_completion(node) {
                    take(i, e, &mut retry);
                }
            }
            if retry.is_empty() {
                break;
            }
        }
        assert!(steps < 50_000_000, "no progress");
    }
    got.sort();
    assert_eq!(got.len(), plan.expected.len(), "completion count");
    assert_eq!(got, plan.expected, "completions (each exactly once)");
    let mut tx = 0;
    let mut busy_nacks = 0;
    for (i, node) in fab.nodes.iter().enumerate() {
        if let Some(a) = node.mem().first_difference(&plan.reference[i]) {
            panic!(
                "node {i}: memory differs from the reference at 0x{a:x}: {} vs {}",
                node.mem().read(a, 1)[0],
                plan.reference[i].read(a, 1)[0]
            );
        }
        assert_eq!(driver::counter(node, cnt::RX_REJECTED), 0);
        assert_eq!(node.damaged_transfers(), 0);
        assert!(node.quiescent());
        tx += driver::counter(node, cnt::TX_PACKETS) as u64;
        busy_nacks += driver::counter(node, cnt::RD_BUSY_NACKS) as u64;
    }
    // Each refused read: its request and the Nack, then posted again.
    assert_eq!(
        busy_nacks, retried,
        "every READ_BUSY nack reached software once"
    );
    assert_eq!(
        tx,
        plan.packets + 2 * retried,
        "packets = segmentation formula + refused reads"
    );
    assert!(fab.undeliverable.is_empty());
    eprintln!(
        "{n} nodes, {ops} ops, {tx} packets, {steps} steps, busy offers {}, reads refused (read queue full) {retried}",
        fab.outcomes[3]
    );
}

#[test]
fn pair_random_writes_and_reads_default_params() {
    run(&NiParams::default(), 2, 300, false, true, 1);
}

#[test]
fn pair_random_small_queues_and_payload() {
    let p = NiParams {
        channels: 2,
        desc_queue_depth: 2,
        pkt_slots: 1,
        mailbox_depth: 1,
        mailbox_msg_bytes: 16,
        cq_depth: 2,
        resp_queue_depth: 1,
        read_queue_depth: 1,
        errq_depth: 1,
        poison_depth: 1,
        windows: 2,
        max_payload_bytes: 64,
        addr_bits: 40,
        ..Default::default()
    };
    for seed in 2..5 {
        run(&p, 2, 250, false, seed == 2, seed);
    }
}

#[test]
fn several_nodes_with_loopback() {
    let p = NiParams {
        max_payload_bytes: 128,
        cq_depth: 3,
        ..Default::default()
    };
    run(&p, 4, 400, true, false, 7);
    run(
        &NiParams {
            channels: 1,
            windows: 1,
            max_payload_bytes: 16,
            mailbox_msg_bytes: 16,
            addr_bits: 42,
            ..Default::default()
        },
        3,
        200,
        true,
        false,
        8,
    );
}

/// A 1 MiB write lands whole, byte for byte, at an odd address.
#[test]
fn one_mib_write_unaligned() {
    let p = NiParams::default();
    let mut rng = Rng::new(9);
    let a = node(&p, 0, &mut rng);
    let b = node(&p, 1, &mut rng);
    let len = 1u32 << 20;
    let src = region(1) + 13;
    let land = region(1) + DEST_OFF + 0x7_0005;
    let data = a.mem().read(src, len as usize);
    let mut fab = Fabric::new(vec![a, b]).unwrap();
    let d = Descriptor {
        op: Op::Write,
        laddr: src,
        raddr: land,
        len,
        dest: coords(1),
        notify: true,
        txid: 0x3FFF,
    };
    assert_eq!(driver::post(&mut fab.nodes[0], 1, &d), AxilResp::Okay);
    while !fab.idle() {
        fab.step();
    }
    assert_eq!(fab.nodes[1].mem().read(land, len as usize), data);
    assert_eq!(fab.nodes[1].mem().read(land - 1, 1), vec![0]);
    assert_eq!(fab.nodes[1].mem().read(land + len as u64, 1), vec![0]);
    let e = driver::pop_completion(&mut fab.nodes[1]).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid, e.peer),
        (CqKind::WriteIn, CqStatus::Ok, 0x3FFF, coords(0))
    );
    let e = driver::pop_completion(&mut fab.nodes[0]).unwrap();
    assert_eq!(
        (e.kind, e.status, e.peer),
        (CqKind::Notify, CqStatus::Ok, coords(1))
    );
    assert_eq!(
        driver::counter(&fab.nodes[0], cnt::TX_PACKETS) as u64,
        packet_count(land, len as u64, 256)
    );
    assert_eq!(driver::counter(&fab.nodes[1], cnt::RX_DATA_BYTES), len);
}
