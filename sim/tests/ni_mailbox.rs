//! NI golden model: packetizer -> mailbox, acknowledgements, nack and retry,
//! many-to-one bursts into a small mailbox (nothing lost, nothing doubled).

use exanet_sim::ni::driver;
use exanet_sim::ni::errors::RejectReason;
use exanet_sim::ni::fabric::Fabric;
use exanet_sim::ni::mailbox::MailboxEntry;
use exanet_sim::ni::regs::{self, cnt, ChError};
use exanet_sim::ni::{AxilResp, Ni, NiParams, Prot, RxOutcome};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::header::{Header, PacketType};
use exanet_sim::rng::Rng;

fn at(x: u8) -> Coords {
    Coords::new(x, 2, 0, 0).unwrap()
}

fn ni(p: &NiParams, x: u8) -> Ni {
    let mut n = Ni::new(p, at(x)).unwrap();
    driver::set_mailbox(&mut n, 0, true).unwrap();
    n
}

fn ptype(p: &exanet_sim::ni::Packet) -> PacketType {
    Header::from_bits(p.header_word()).unwrap().ptype()
}

#[test]
fn packetizer_message_reaches_the_mailbox_as_one_packet() {
    let p = NiParams::default();
    let mut a = ni(&p, 0);
    let mut b = ni(&p, 1);
    driver::set_channel_pdid(&mut a, 2, 0x55).unwrap();
    let mut rng = Rng::new(1);
    for len in 1..=64usize {
        let msg: Vec<u8> = (0..len).map(|_| rng.bits(8) as u8).collect();
        assert_eq!(driver::send_message(&mut a, 2, at(1), &msg), AxilResp::Okay);
        let pk = a.emit_packet().unwrap();
        assert!(a.emit_packet().is_none(), "one packet, no DMA");
        assert_eq!(ptype(&pk), PacketType::Mailbox);
        assert_eq!(pk.len_words(), 2 + len.div_ceil(16));
        assert_eq!(driver::pkt_free(&a, 2), p.pkt_slots - 1, "kept until acked");
        assert_eq!(b.receive_packet(&pk), RxOutcome::Accepted);
        let ack = b.emit_packet().unwrap();
        assert_eq!(ptype(&ack), PacketType::MailboxAck);
        assert_eq!(a.receive_packet(&ack), RxOutcome::Accepted);
        assert_eq!(driver::pkt_free(&a, 2), p.pkt_slots);
        assert_eq!(
            driver::pop_message(&mut b),
            Some(MailboxEntry {
                src: at(0),
                pdid: 0x55,
                data: msg
            })
        );
    }
    assert!(driver::pop_message(&mut b).is_none());
    // The same ack again is stale: rejected, counted.
    assert_eq!(driver::send_message(&mut a, 0, at(1), b"x"), AxilResp::Okay);
    let pk = a.emit_packet().unwrap();
    b.receive_packet(&pk);
    let ack = b.emit_packet().unwrap();
    assert_eq!(a.receive_packet(&ack), RxOutcome::Accepted);
    assert_eq!(
        a.receive_packet(&ack),
        RxOutcome::Rejected(RejectReason::Stale)
    );
    assert_eq!(driver::rejections(&a, RejectReason::Stale), 1);
}

#[test]
fn full_mailbox_nacks_and_the_sender_retries_the_same_bytes() {
    let p = NiParams {
        mailbox_depth: 1,
        ..Default::default()
    };
    let mut a = ni(&p, 0);
    let mut b = ni(&p, 1);
    assert_eq!(
        driver::send_message(&mut a, 0, at(1), b"first"),
        AxilResp::Okay
    );
    assert_eq!(
        driver::send_message(&mut a, 0, at(1), b"second"),
        AxilResp::Okay
    );
    let m1 = a.emit_packet().unwrap();
    let m2 = a.emit_packet().unwrap();
    assert_eq!(b.receive_packet(&m1), RxOutcome::Accepted);
    assert_eq!(b.receive_packet(&m2), RxOutcome::Refused);
    let ack = b.emit_packet().unwrap();
    let nack = b.emit_packet().unwrap();
    assert_eq!(
        (ptype(&ack), ptype(&nack)),
        (PacketType::MailboxAck, PacketType::MailboxNack)
    );
    assert_eq!(driver::counter(&b, cnt::MB_FULL_NACKS), 1);
    assert_eq!(
        driver::counter(&b, cnt::RX_REJECTED),
        0,
        "a refusal is not an error"
    );
    a.receive_packet(&ack);
    a.receive_packet(&nack);
    assert_eq!(driver::counter(&a, cnt::MB_RETRIES), 1);
    let again = a.emit_packet().unwrap();
    assert_eq!(again, m2, "retried bit for bit");
    assert_eq!(driver::pop_message(&mut b).unwrap().data, b"first");
    assert_eq!(b.receive_packet(&again), RxOutcome::Accepted);
    assert_eq!(driver::pop_message(&mut b).unwrap().data, b"second");
}

/// Several senders, two channels each, a 2-entry mailbox drained slowly:
/// every message arrives exactly once, nacks happen and are retried.
#[test]
fn many_to_one_burst_loses_nothing() {
    for (seed, senders, depth, per) in [
        (1u64, 5usize, 2usize, 30usize),
        (2, 7, 1, 20),
        (3, 3, 4, 40),
    ] {
        let p = NiParams {
            channels: 2,
            pkt_slots: 2,
            mailbox_depth: depth,
            resp_queue_depth: 2,
            ..Default::default()
        };
        let mut rng = Rng::new(seed);
        let nodes: Vec<Ni> = (0..=senders).map(|i| ni(&p, i as u8)).collect();
        let mut fab = Fabric::new(nodes).unwrap();
        // Messages: (sender, channel, number) in the first 3 bytes, random tail.
        let mut todo: Vec<Vec<Vec<u8>>> = vec![Vec::new(); 2 * senders];
        let mut sent = Vec::new();
        for s in 1..=senders {
            for c in 0..2 {
                for k in 0..per {
                    let len = 3 + rng.below(62) as usize;
                    let mut m = vec![s as u8, c as u8, k as u8];
                    m.extend((3..len).map(|_| rng.bits(8) as u8));
                    sent.push((at(s as u8), m.clone()));
                    todo[2 * (s - 1) + c].push(m);
                }
            }
        }
        for q in &mut todo {
            q.reverse();
        }
        let mut got = Vec::new();
        let mut steps = 0;
        loop {
            for s in 1..=senders {
                for c in 0..2 {
                    let q = &mut todo[2 * (s - 1) + c];
                    if !q.is_empty() && driver::pkt_free(&fab.nodes[s], c) > 0 && rng.chance(0.7) {
                        let m = q.pop().unwrap();
                        assert_eq!(
                            driver::send_message(&mut fab.nodes[s], c, at(0), &m),
                            AxilResp::Okay
                        );
                    }
                }
            }
            if rng.chance(0.08) {
                if let Some(e) = driver::pop_message(&mut fab.nodes[0]) {
                    got.push((e.src, e.data));
                }
            }
            fab.step();
            steps += 1;
            let all_sent = todo.iter().all(|q| q.is_empty());
            if all_sent && fab.idle() && fab.nodes.iter().all(|n| n.quiescent()) {
                while let Some(e) = driver::pop_message(&mut fab.nodes[0]) {
                    got.push((e.src, e.data));
                }
                if fab.idle() && fab.nodes.iter().all(|n| n.quiescent()) {
                    break;
                }
            }
            assert!(steps < 2_000_000, "no progress");
        }
        sent.sort();
        got.sort();
        assert_eq!(got.len(), sent.len());
        assert_eq!(got, sent, "every message exactly once");
        let nacks = driver::counter(&fab.nodes[0], cnt::MB_FULL_NACKS);
        let retries: u32 = fab.nodes[1..]
            .iter()
            .map(|n| driver::counter(n, cnt::MB_RETRIES))
            .sum();
        assert!(nacks > 0, "the burst must overflow the mailbox");
        assert_eq!(retries, nacks, "every nack retried");
        for n in &fab.nodes {
            assert_eq!(driver::counter(n, cnt::RX_REJECTED), 0);
            assert_eq!(driver::counter(n, cnt::MB_DENIED), 0);
        }
        eprintln!(
            "{senders} senders x {} msgs, depth {depth}: {nacks} nacks, {steps} steps",
            2 * per
        );
    }
}

#[test]
fn mailbox_pdid_mismatch_is_refused_for_good_and_reported() {
    let p = NiParams::default();
    let mut a = ni(&p, 0);
    let mut b = ni(&p, 1);
    driver::set_mailbox(&mut b, 9, false).unwrap();
    driver::set_channel_pdid(&mut a, 1, 5).unwrap();
    assert_eq!(
        driver::send_message(&mut a, 1, at(1), b"let me in"),
        AxilResp::Okay
    );
    let m = a.emit_packet().unwrap();
    assert_eq!(
        b.receive_packet(&m),
        RxOutcome::Rejected(RejectReason::Pdid)
    );
    assert_eq!(b.axil_read(regs::MB_PAGE + regs::MB_COUNT), 0);
    let e = driver::pop_error(&mut b).unwrap();
    assert_eq!(
        (e.reason, e.ptype, e.pdid, e.src),
        (
            Some(RejectReason::Pdid),
            Some(PacketType::Mailbox),
            5,
            at(0)
        )
    );
    let nack = b.emit_packet().unwrap();
    assert_eq!(ptype(&nack), PacketType::MailboxNack);
    assert_eq!(a.receive_packet(&nack), RxOutcome::Accepted);
    assert_eq!(driver::counter(&a, cnt::MB_DENIED), 1);
    assert_eq!(
        a.axil_read(regs::ch_page(1) + regs::CH_ERR),
        ChError::MsgDenied as u32
    );
    assert_eq!(driver::pkt_free(&a, 1), p.pkt_slots, "slot freed");
    assert!(a.emit_packet().is_none(), "not retried");
    // Matching PDID gets in.
    driver::set_mailbox(&mut b, 5, false).unwrap();
    driver::send_message(&mut a, 1, at(1), b"let me in");
    assert_eq!(
        b.receive_packet(&a.emit_packet().unwrap()),
        RxOutcome::Accepted
    );
}

#[test]
fn corrupted_message_is_nacked_and_resent_intact() {
    let p = NiParams::default();
    let mut a = ni(&p, 0);
    let mut b = ni(&p, 1);
    let msg: Vec<u8> = (0..40).collect();
    driver::send_message(&mut a, 0, at(1), &msg);
    let good = a.emit_packet().unwrap();
    let mut bad = good.clone();
    bad.words[2] ^= 1 << 100;
    assert_eq!(
        b.receive_packet(&bad),
        RxOutcome::Rejected(RejectReason::PayloadCrc)
    );
    assert_eq!(b.axil_read(regs::MB_PAGE + regs::MB_COUNT), 0);
    let nack = b.emit_packet().unwrap();
    a.receive_packet(&nack);
    let again = a.emit_packet().unwrap();
    assert_eq!(again, good);
    assert_eq!(b.receive_packet(&again), RxOutcome::Accepted);
    a.receive_packet(&b.emit_packet().unwrap());
    assert_eq!(driver::pop_message(&mut b).unwrap().data, msg);
    assert!(driver::pop_message(&mut b).is_none());
    assert!(a.quiescent());
}

/// The interrupt: IRQ_ENABLE keeps only STATUS's bits, is privileged, and
/// `irq()` is high exactly while an enabled STATUS bit is set — here the
/// mailbox's, raised by a message and lowered by its pop.
#[test]
fn the_interrupt_follows_the_enabled_status_bits() {
    let p = NiParams::default();
    let mut a = ni(&p, 0);
    let mut b = ni(&p, 1);
    assert!(!b.irq(), "reset: nothing enabled");
    assert_eq!(b.axil_write_priv(regs::IRQ_ENABLE, !0), AxilResp::Okay);
    assert_eq!(b.axil_read_priv(regs::IRQ_ENABLE), regs::IRQ_ENABLE_MASK);
    assert_eq!(
        b.axil_write_prot(regs::IRQ_ENABLE, 0, Prot::User),
        AxilResp::SlvErr,
        "privileged only"
    );
    assert!(!b.irq(), "every bit enabled, none set");
    b.axil_write_priv(regs::IRQ_ENABLE, regs::ST_CQ_NONEMPTY);
    assert_eq!(
        driver::send_message(&mut a, 0, at(1), b"wake"),
        AxilResp::Okay
    );
    let pk = a.emit_packet().unwrap();
    assert_eq!(b.receive_packet(&pk), RxOutcome::Accepted);
    assert_ne!(b.axil_read_priv(regs::STATUS) & regs::ST_MB_NONEMPTY, 0);
    assert!(!b.irq(), "the mailbox bit is not enabled");
    b.axil_write_priv(regs::IRQ_ENABLE, regs::ST_MB_NONEMPTY);
    assert!(b.irq(), "a message waits and its bit is enabled");
    assert!(driver::pop_message(&mut b).is_some());
    assert!(!b.irq(), "the message is taken");
}
