//! NI golden model: message classes. A packet on the other class's VC is
//! rejected WRONG_CLASS (nothing written, nothing sent, counted in
//! REJ[11]); a read request finding the read queue full is answered
//! Nack(READ_BUSY = 12), which reaches the requester's software as a
//! READ_DONE / REMOTE_DENIED entry with reason 12; and two nodes flooding
//! each other with reads and mailbox messages through a network with
//! little buffering finish everything when the classes are kept apart (and
//! deadlock when they share the network, the problem the classes solve).

use exanet_sim::ni::driver;
use exanet_sim::ni::errors::RejectReason;
use exanet_sim::ni::fabric::Fabric;
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::regs::{self, cnt};
use exanet_sim::ni::{
    AxilResp, CqEntry, CqKind, CqStatus, Descriptor, Ni, NiParams, Op, Packet, RxOutcome,
};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::header::{Header, PacketType};
use exanet_sim::rng::Rng;
use std::collections::BTreeMap;

const PDID: u16 = 7;
/// Sources of reads (filled with random bytes at every node).
const SRC: u64 = 0x1000_0000;
const SRC_BYTES: usize = 0x4_0000;
/// Landing areas: read k of a node lands at LAND + k * LAND_STRIDE.
const LAND: u64 = 0x2000_0000;
const LAND_STRIDE: u64 = 0x1_0000;

fn at(i: usize) -> Coords {
    Coords::new(i as u8, 1, 0, 0).unwrap()
}

/// A node: every channel PDID 7, one window [0, 2^32) for PDID 7, the
/// mailbox open, random bytes at SRC.
fn node(p: &NiParams, i: usize, seed: u64) -> Ni {
    let mut n = Ni::new(p, at(i)).unwrap();
    for c in 0..p.channels {
        driver::set_channel_pdid(&mut n, c, PDID).unwrap();
    }
    driver::set_window(&mut n, 0, 0, 1 << 32, PDID).unwrap();
    driver::set_mailbox(&mut n, 0, true).unwrap();
    let mut rng = Rng::new(seed);
    let src: Vec<u8> = (0..SRC_BYTES).map(|_| rng.bits(8) as u8).collect();
    n.mem_mut().write(SRC, &src);
    n
}

fn ptype(p: &Packet) -> PacketType {
    Header::from_bits(p.header_word()).unwrap().ptype()
}

fn read(k: u16, peer: usize, len: u32, notify: bool) -> Descriptor {
    Descriptor {
        op: Op::Read,
        laddr: LAND + k as u64 * LAND_STRIDE,
        raddr: SRC + 0x100 * k as u64,
        len,
        dest: at(peer),
        notify,
        txid: k,
    }
}

/// Requests (class 0) on a class-1 VC and responses (class 1) on a
/// class-0 VC are rejected WRONG_CLASS: no memory change, no completion,
/// no response (not even the Nack a rejected request otherwise gets),
/// counted in REJ[11] and reported; the same packets on their own class
/// are accepted.
#[test]
fn packets_on_the_wrong_class_are_rejected_and_answer_nothing() {
    let p = NiParams::default();
    let (mut a, mut b) = (node(&p, 0, 1), node(&p, 1, 2));
    let before = b.mem().clone();

    // An RDMA write (3 packets, notify) on class 1.
    let w = Descriptor {
        op: Op::Write,
        laddr: SRC,
        raddr: LAND,
        len: 600,
        dest: at(1),
        notify: true,
        txid: 5,
    };
    assert_eq!(driver::post(&mut a, 0, &w), AxilResp::Okay);
    let writes: Vec<Packet> = std::iter::from_fn(|| a.emit_request()).collect();
    assert_eq!(writes.len(), 3);
    for pk in &writes {
        assert_eq!(
            b.receive_packet_on(pk, 1),
            RxOutcome::Rejected(RejectReason::WrongClass)
        );
    }
    // A read request and a mailbox message on class 1.
    assert_eq!(
        driver::post(&mut a, 1, &read(9, 1, 64, false)),
        AxilResp::Okay
    );
    let rq = a.emit_request().unwrap();
    assert_eq!(ptype(&rq), PacketType::RdmaReadReq);
    assert_eq!(
        b.receive_packet_on(&rq, 1),
        RxOutcome::Rejected(RejectReason::WrongClass)
    );
    assert_eq!(
        driver::send_message(&mut a, 0, at(1), b"hello"),
        AxilResp::Okay
    );
    let msg = a.emit_request().unwrap();
    assert_eq!(ptype(&msg), PacketType::Mailbox);
    assert_eq!(
        b.receive_packet_on(&msg, 1),
        RxOutcome::Rejected(RejectReason::WrongClass)
    );

    assert_eq!(b.mem(), &before, "no byte changed");
    assert!(b.emit_packet().is_none(), "no Nack, MailboxNack or notify");
    assert!(driver::pop_completion(&mut b).is_none());
    assert!(driver::pop_message(&mut b).is_none());
    assert_eq!(driver::rejections(&b, RejectReason::WrongClass), 5);
    assert_eq!(b.axil_read_priv(regs::REJ_BASE + 44), 5, "REJ[11] at 0x0AC");
    assert_eq!(driver::counter(&b, cnt::RX_REJECTED), 5);
    assert_eq!(driver::counter(&b, cnt::RX_PACKETS), 5);
    let want = [
        (PacketType::RdmaWrite, 5),
        (PacketType::RdmaWrite, 5),
        (PacketType::RdmaWrite, 5),
        (PacketType::RdmaReadReq, 9),
        (PacketType::Mailbox, 0),
    ];
    for (t, txid) in want {
        let e = driver::pop_error(&mut b).unwrap();
        assert_eq!(e.reason, Some(RejectReason::WrongClass));
        assert!(e.header_ok && e.footer_ok, "header and footer trusted");
        assert_eq!((e.ptype, e.txid, e.src), (Some(t), txid, at(0)));
    }
    assert!(driver::pop_error(&mut b).is_none());
    // The same request with a forged PDID on its own class is answered
    // (Nack, flags = reason): the silence above is WRONG_CLASS's own.
    let mut forged = b.clone();
    driver::set_window(&mut forged, 0, 0, 1 << 32, PDID + 1).unwrap();
    assert_eq!(
        forged.receive_packet_on(&rq, 0),
        RxOutcome::Rejected(RejectReason::Pdid)
    );
    let nack = forged.emit_response().unwrap();
    assert_eq!(ptype(&nack), PacketType::Nack);

    // On their own class, the same packets are accepted.
    for pk in &writes {
        assert_eq!(b.receive_packet_on(pk, 0), RxOutcome::Accepted);
    }
    assert_eq!(b.mem().read(LAND, 600), a.mem().read(SRC, 600));
    let e = driver::pop_completion(&mut b).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid),
        (CqKind::WriteIn, CqStatus::Ok, 5)
    );
    assert_eq!(b.receive_packet_on(&msg, 0), RxOutcome::Accepted);
    assert_eq!(driver::pop_message(&mut b).unwrap().data, b"hello");

    // Responses: the notify (RdmaCompletion) and the MailboxAck on class 0.
    let notify = b.emit_response().unwrap();
    let ack = b.emit_response().unwrap();
    assert!(b.emit_response().is_none());
    assert_eq!(
        (ptype(&notify), ptype(&ack)),
        (PacketType::RdmaCompletion, PacketType::MailboxAck)
    );
    let slots = driver::pkt_free(&a, 0);
    for r in [&notify, &ack] {
        assert_eq!(
            a.receive_packet_on(r, 0),
            RxOutcome::Rejected(RejectReason::WrongClass)
        );
    }
    assert!(driver::pop_completion(&mut a).is_none(), "no NOTIFY posted");
    assert_eq!(
        driver::pkt_free(&a, 0),
        slots,
        "the message is still unacknowledged"
    );
    assert!(a.emit_response().is_none());
    assert_eq!(driver::rejections(&a, RejectReason::WrongClass), 2);
    // receive_packet offers a packet on its type's class.
    assert_eq!(a.receive_packet(&notify), RxOutcome::Accepted);
    assert_eq!(a.receive_packet_on(&ack, 1), RxOutcome::Accepted);
    assert_eq!(driver::pkt_free(&a, 0), slots + 1);
    let e = driver::pop_completion(&mut a).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid),
        (CqKind::Notify, CqStatus::Ok, 5)
    );
    // A write whose middle packet came on the wrong class never completes OK.
    assert_eq!(
        driver::post(&mut a, 0, &Descriptor { txid: 6, ..w }),
        AxilResp::Okay
    );
    let out: Vec<RxOutcome> = std::iter::from_fn(|| a.emit_request())
        .enumerate()
        .map(|(i, pk)| b.receive_packet_on(&pk, (i == 1) as usize))
        .collect();
    assert_eq!(
        out,
        [
            RxOutcome::Accepted,
            RxOutcome::Rejected(RejectReason::WrongClass),
            RxOutcome::Accepted
        ]
    );
    let e = driver::pop_completion(&mut b).unwrap();
    assert_eq!((e.txid, e.status), (6, CqStatus::PacketRejected));
}

/// A read request finding the read queue full is refused with a class-1
/// Nack(READ_BUSY = 12), counted in RD_BUSY_NACKS (0x064), not an error;
/// with the response queue full too it waits (Busy). The requester posts
/// READ_DONE / REMOTE_DENIED with reason 12; the served read completes.
#[test]
fn read_queue_full_answers_nack_read_busy() {
    assert_eq!(NACK_READ_BUSY, 12);
    assert_eq!(RejectReason::MAX_CODE, 11);
    assert_eq!(regs::CNT_BASE + 4 * cnt::RD_BUSY_NACKS as u32, 0x064);
    let p = NiParams {
        read_queue_depth: 1,
        resp_queue_depth: 1,
        ..Default::default()
    };
    let (mut a, mut b) = (node(&p, 0, 3), node(&p, 1, 4));
    for k in 1..=3 {
        assert_eq!(
            driver::post(&mut a, 0, &read(k, 1, 300, false)),
            AxilResp::Okay
        );
    }
    let rqs: Vec<Packet> = std::iter::from_fn(|| a.emit_request()).collect();
    assert_eq!(rqs.len(), 3);
    assert_eq!(b.receive_packet(&rqs[0]), RxOutcome::Accepted);
    assert_eq!(b.receive_packet(&rqs[1]), RxOutcome::Refused);
    assert_eq!(
        b.receive_packet(&rqs[2]),
        RxOutcome::Busy,
        "read queue and response queue full"
    );
    let nack2 = b.emit_response().unwrap();
    assert_eq!(b.receive_packet(&rqs[2]), RxOutcome::Refused);
    let nack3 = b.emit_response().unwrap();
    assert_eq!(driver::counter(&b, cnt::RD_BUSY_NACKS), 2);
    assert_eq!(b.axil_read_priv(0x064), 2);
    assert_eq!(driver::counter(&b, cnt::RX_REJECTED), 0, "not an error");
    assert!(driver::pop_error(&mut b).is_none());
    for (n, txid) in [(&nack2, 2), (&nack3, 3)] {
        assert_eq!(ptype(n), PacketType::Nack);
        assert_eq!(PacketType::Nack.class(), 1);
        assert_eq!(a.receive_packet_on(n, 1), RxOutcome::Accepted);
        let e = driver::pop_completion(&mut a).unwrap();
        assert_eq!(
            e,
            CqEntry {
                kind: CqKind::ReadDone,
                status: CqStatus::RemoteDenied,
                reason: 12,
                txid,
                peer: at(1),
                pdid: PDID,
            }
        );
        // As software reads it: CQ_W0 reason[11:8] = 12.
        assert_eq!(e.words()[0] >> 8 & 0xF, 12);
    }
    // The read that was queued is served (class 0) and completes.
    let resp: Vec<Packet> = std::iter::from_fn(|| b.emit_request()).collect();
    assert_eq!(resp.len(), 2);
    assert!(resp.iter().all(|r| ptype(r) == PacketType::RdmaReadResp));
    for r in &resp {
        assert_eq!(a.receive_packet_on(r, 0), RxOutcome::Accepted);
    }
    let e = driver::pop_completion(&mut a).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid),
        (CqKind::ReadDone, CqStatus::Ok, 1)
    );
    assert_eq!(
        a.mem().read(LAND + LAND_STRIDE, 300),
        b.mem().read(SRC + 0x100, 300)
    );
    // The queue has room again: the refused read, posted again, is served.
    assert_eq!(
        driver::post(&mut a, 0, &read(2, 1, 300, false)),
        AxilResp::Okay
    );
    let rq = a.emit_request().unwrap();
    assert_eq!(b.receive_packet(&rq), RxOutcome::Accepted);
}

/// The fabric's queue capacity and held packets: a full destination queue
/// keeps the packet at its source, in order, until there is room; with one
/// class, responses share the queue with requests.
#[test]
fn bounded_fabric_holds_packets_at_the_source_in_order() {
    let p = NiParams::default();
    let mut fab = Fabric::new(vec![node(&p, 0, 5), node(&p, 1, 6)]).unwrap();
    assert!(fab.set_classes(3).is_err());
    assert!(fab.set_classes(0).is_err());
    fab.capacity = Some(1);
    fab.inject = 2;
    for classes in [2, 1] {
        fab.set_classes(classes).unwrap();
        let mut sent = Vec::new();
        for k in 0..p.pkt_slots as u8 {
            let m = vec![k + 10 * classes as u8; 1 + k as usize];
            assert_eq!(
                driver::send_message(&mut fab.nodes[0], 0, at(1), &m),
                AxilResp::Okay
            );
            sent.push(m);
        }
        let (mut got, mut max_held, mut steps) = (Vec::new(), 0, 0);
        while !(fab.idle() && fab.nodes.iter().all(|n| n.quiescent())) {
            if let Some(e) = driver::pop_message(&mut fab.nodes[1]) {
                got.push(e.data);
            }
            fab.step();
            for d in 0..2 {
                let q = fab.queued(d);
                assert!(q[0] <= 1 && q[1] <= 1, "capacity 1: {q:?}");
                if classes == 1 {
                    assert_eq!(q[1], 0, "one class: one queue");
                }
            }
            max_held = max_held.max(fab.held());
            steps += 1;
            assert!(steps < 1000);
        }
        while let Some(e) = driver::pop_message(&mut fab.nodes[1]) {
            got.push(e.data);
        }
        assert_eq!(got, sent, "in order, each once ({classes} classes)");
        assert!(max_held > 0, "two packets a step into a queue of one");
    }
    // A forged response on class 0 is offered as arriving on class 0.
    fab.inject_packet_on(response_to(&fab.nodes[0]), 0);
    assert!(fab.set_classes(2).is_err(), "packets in flight");
    let rejected = fab.outcomes[2];
    fab.step();
    assert_eq!(fab.outcomes[2], rejected + 1);
    assert_eq!(
        driver::rejections(&fab.nodes[0], RejectReason::WrongClass),
        1
    );
    fab.set_classes(2).unwrap();
    fab.inject_packet(response_to(&fab.nodes[0]));
    fab.step();
    assert_eq!(
        driver::rejections(&fab.nodes[0], RejectReason::Stale),
        1,
        "on its own class: checked further (names no message)"
    );
}

/// A MailboxAck to `n` naming no message (for the fabric test).
fn response_to(n: &Ni) -> Packet {
    exanet_sim::ni::rdma_rx::response_packet(PacketType::MailboxAck, at(1), n.me(), PDID, 0, 0)
}

/// A random node other than `i` of `n`.
fn other(rng: &mut Rng, i: usize, n: usize) -> usize {
    (i + 1 + rng.below(n as u64 - 1) as usize) % n
}

/// What a mutual-flood run ended with.
#[derive(Debug)]
enum Flood {
    /// Everything completed.
    Done,
    /// Nothing moved for a long time with packets in flight.
    Deadlock { in_flight: usize },
}

/// `n` nodes read from each other (random peers and lengths, some with
/// notify) and send each other mailbox messages, with one-entry response
/// queues, two-entry read queues and mailboxes, `capacity` packets of
/// buffering per destination queue, each node injecting up to `inject`
/// packets per step, the network keeping `classes` classes apart.
/// Software posts work as channel space allows, drains completions and
/// messages at random moments and posts reads refused with READ_BUSY
/// again. On completion, checks every landing area byte for byte, every
/// completion (exactly once) and every message (exactly once).
fn mutual_flood(n: usize, classes: usize, capacity: usize, inject: usize, seed: u64) -> Flood {
    const READS: u16 = 40;
    const MSGS: usize = 200;
    let p = NiParams {
        channels: 2,
        desc_queue_depth: 2,
        pkt_slots: 8,
        mailbox_depth: 2,
        cq_depth: 4,
        resp_queue_depth: 1,
        read_queue_depth: 2,
        max_payload_bytes: 64,
        ..Default::default()
    };
    let mut rng = Rng::new(seed);
    let nodes: Vec<Ni> = (0..n).map(|i| node(&p, i, seed * 16 + i as u64)).collect();
    // Per node: its reads by txid, the txids still to post (next last),
    // its messages still to send (next last).
    let mut plan: Vec<BTreeMap<u16, Descriptor>> = vec![BTreeMap::new(); n];
    let mut to_read: Vec<Vec<u16>> = vec![Vec::new(); n];
    let mut to_send: Vec<Vec<(usize, Vec<u8>)>> = vec![Vec::new(); n];
    let mut expected: Vec<(usize, CqEntry)> = Vec::new();
    let mut sent: Vec<(Coords, Vec<u8>)> = Vec::new();
    for i in 0..n {
        for k in 0..READS {
            let peer = other(&mut rng, i, n);
            let d = read(k, peer, 1 + rng.below(1000) as u32, rng.chance(0.5));
            let e = |kind, peer| CqEntry {
                kind,
                status: CqStatus::Ok,
                reason: 0,
                txid: k,
                peer: at(peer),
                pdid: PDID,
            };
            expected.push((i, e(CqKind::ReadDone, peer)));
            if d.notify {
                expected.push((peer, e(CqKind::Notify, i)));
            }
            plan[i].insert(k, d);
            to_read[i].insert(0, k);
        }
        for k in 0..MSGS {
            let len = 3 + rng.below(62) as usize;
            let mut m = vec![i as u8, k as u8, (k >> 8) as u8];
            m.extend((3..len).map(|_| rng.bits(8) as u8));
            let to = other(&mut rng, i, n);
            sent.push((at(i), m.clone()));
            to_send[i].insert(0, (to, m));
        }
    }
    let mut fab = Fabric::new(nodes).unwrap();
    fab.set_classes(classes).unwrap();
    fab.capacity = Some(capacity);
    fab.inject = inject;
    let mut got: Vec<(usize, CqEntry)> = Vec::new();
    let mut delivered: Vec<(Coords, Vec<u8>)> = Vec::new();
    // Software takes a completion: a read refused with READ_BUSY is
    // posted again (same descriptor), everything else is recorded.
    let take =
        |i: usize, e: CqEntry, got: &mut Vec<(usize, CqEntry)>, to_read: &mut Vec<Vec<u16>>| {
            if e.kind == CqKind::ReadDone && e.reason == NACK_READ_BUSY {
                assert_eq!(e.status, CqStatus::RemoteDenied);
                to_read[i].push(e.txid);
                true
            } else {
                got.push((i, e));
                false
            }
        };
    let mut refused = 0u32;
    let (mut steps, mut still) = (0u64, 0u32);
    loop {
        for i in 0..n {
            let node = &mut fab.nodes[i];
            if !to_read[i].is_empty() && driver::desc_free(node, 0) > 0 && rng.chance(0.5) {
                let k = to_read[i].pop().unwrap();
                assert_eq!(driver::post(node, 0, &plan[i][&k]), AxilResp::Okay);
            }
            for c in 0..2 {
                if !to_send[i].is_empty() && driver::pkt_free(node, c) > 0 && rng.chance(0.9) {
                    let (to, m) = to_send[i].pop().unwrap();
                    assert_eq!(driver::send_message(node, c, at(to), &m), AxilResp::Okay);
                }
            }
            if rng.chance(0.5) {
                while let Some(e) = driver::pop_completion(node) {
                    refused += take(i, e, &mut got, &mut to_read) as u32;
                }
            }
            if rng.chance(0.3) {
                if let Some(m) = driver::pop_message(node) {
                    delivered.push((m.src, m.data));
                }
            }
        }
        let moved = fab.step();
        steps += 1;
        // Software drains its queues every other step on average: a
        // network standing still this long with packets in it is stuck.
        still = if moved || fab.in_flight() == 0 {
            0
        } else {
            still + 1
        };
        if still >= 2_000 {
            return Flood::Deadlock {
                in_flight: fab.in_flight(),
            };
        }
        let posted = to_read.iter().all(|r| r.is_empty()) && to_send.iter().all(|m| m.is_empty());
        if posted && fab.idle() && fab.nodes.iter().all(|n| n.quiescent()) {
            for (i, n) in fab.nodes.iter_mut().enumerate() {
                while let Some(e) = driver::pop_completion(n) {
                    refused += take(i, e, &mut got, &mut to_read) as u32;
                }
                while let Some(m) = driver::pop_message(n) {
                    delivered.push((m.src, m.data));
                }
            }
            if to_read.iter().all(|r| r.is_empty()) {
                break;
            }
        }
        assert!(steps < 5_000_000, "neither done nor stuck");
    }
    got.sort();
    expected.sort();
    assert_eq!(got, expected, "every completion exactly once");
    delivered.sort();
    sent.sort();
    assert_eq!(delivered, sent, "every message exactly once");
    let nacks: u32 = fab
        .nodes
        .iter()
        .map(|n| driver::counter(n, cnt::RD_BUSY_NACKS))
        .sum();
    assert_eq!(nacks, refused, "every READ_BUSY Nack reached software once");
    for (i, node) in fab.nodes.iter().enumerate() {
        for d in plan[i].values() {
            let peer = &fab.nodes[d.dest.x() as usize];
            assert_eq!(
                node.mem().read(d.laddr, d.len as usize),
                peer.mem().read(d.raddr, d.len as usize),
                "node {i} read {}",
                d.txid
            );
        }
        assert_eq!(driver::counter(node, cnt::RX_REJECTED), 0);
    }
    eprintln!("classes {classes}, capacity {capacity}, seed {seed}: {steps} steps, {refused} reads refused (READ_BUSY), outcomes {:?}", fab.outcomes);
    Flood::Done
}

/// Runs of the flood: (nodes, queue capacity, packets injected per node
/// per step, seed).
const FLOODS: [(usize, usize, usize, u64); 6] = [
    (3, 1, 2, 1),
    (3, 2, 2, 2),
    (4, 1, 2, 3),
    (4, 4, 2, 4),
    (3, 1, 1, 5),
    (4, 2, 1, 6),
];

/// Two classes on separate queues: the flood completes, for several node
/// counts, buffer sizes (one packet per destination queue included) and
/// seeds.
#[test]
fn mutual_reads_and_messages_complete_with_two_classes() {
    for (n, capacity, inject, seed) in FLOODS.into_iter().chain([(2, 1, 1, 7), (2, 2, 2, 8)]) {
        match mutual_flood(n, 2, capacity, inject, seed) {
            Flood::Done => {}
            f => panic!("{n} nodes, capacity {capacity}, inject {inject}, seed {seed}: {f:?}"),
        }
    }
}

/// The same floods through a one-class network (responses share the
/// queues with requests) deadlock: the classes are what makes them
/// complete. (Two nodes alone do not: a node sends a request only when its
/// response queue is empty, which leaves the pair one free buffer; a third
/// node's requests take it.)
#[test]
fn the_same_floods_deadlock_when_the_classes_share_the_network() {
    for (n, capacity, inject, seed) in FLOODS {
        match mutual_flood(n, 1, capacity, inject, seed) {
            Flood::Deadlock { in_flight } => assert!(in_flight > 0),
            f => panic!("{n} nodes, capacity {capacity}, inject {inject}, seed {seed}: {f:?}"),
        }
    }
}
