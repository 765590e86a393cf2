//! NI golden model: register map and access rules, refused doorbells and
//! sends, the exact packet emission order, and Busy (back-pressure) rules.

use exanet_sim::ni::driver;
use exanet_sim::ni::memory::MemWrite;
use exanet_sim::ni::rdma_rx::NACK_READ_BUSY;
use exanet_sim::ni::regs::{self, cnt, ChError};
use exanet_sim::ni::{AxilResp, Descriptor, Ni, NiParams, Op, Packet, Prot, RxOutcome};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{Header, PacketType};

fn x() -> Coords {
    Coords::new(2, 3, 4, 1).unwrap()
}
fn y() -> Coords {
    Coords::new(5, 0, 0, 0).unwrap()
}

fn open(p: &NiParams, c: Coords) -> Ni {
    let mut n = Ni::new(p, c).unwrap();
    driver::set_window(&mut n, 0, 0, 1 << 42, 0).unwrap();
    driver::set_mailbox(&mut n, 0, true).unwrap();
    n
}

fn write(len: u32, raddr: u64, dest: Coords, txid: u16) -> Descriptor {
    Descriptor {
        op: Op::Write,
        laddr: 0x10_0000,
        raddr,
        len,
        dest,
        notify: false,
        txid,
    }
}

fn kind(p: &Packet) -> (PacketType, u16, Coords) {
    let h = Header::from_bits(p.header_word()).unwrap();
    (h.ptype(), h.size(), h.dest())
}

#[test]
fn identification_parameters_and_privilege() {
    let p = NiParams {
        channels: 3,
        windows: 5,
        ..Default::default()
    };
    let mut n = Ni::new(&p, x()).unwrap();
    assert_eq!(n.axil_read_priv(regs::ID), regs::ID_VALUE);
    assert_eq!(
        n.axil_read_prot(regs::ID, Prot::User),
        (0, AxilResp::SlvErr)
    );
    assert_eq!(
        n.axil_read_priv(regs::PARAMS0),
        3 | 5 << 8 | 16 << 16 | 4 << 24
    );
    assert_eq!(n.axil_read_priv(regs::PARAMS1), 16 | 64 << 16);
    assert_eq!(n.axil_read_priv(regs::PARAMS2), 16 | 16 << 16);
    assert_eq!(
        n.axil_read_priv(regs::PARAMS3),
        4 | 8 << 8 | 4 << 16 | 4 << 24
    );
    assert_eq!(n.axil_read_priv(regs::PARAMS4), 40);
    assert_eq!(n.axil_read_priv(regs::COORDS), x().to_bits());
    assert_eq!(n.axil_read_priv(regs::CONTROL), 1, "TX_ENABLE resets to 1");

    // PDIDs: only privileged writes reach them.
    assert_eq!(n.axil_write(regs::CH_PDID_BASE + 4, 9), AxilResp::SlvErr);
    assert_eq!(
        n.axil_write_priv(regs::CH_PDID_BASE + 4, 0xABCD_0009),
        AxilResp::Okay
    );
    let page = regs::ch_page(1);
    assert_eq!(n.axil_read(page + regs::CH_PDID), 9);
    assert_eq!(
        n.axil_write(page + regs::CH_PDID, 3),
        AxilResp::SlvErr,
        "user cannot change its PDID"
    );
    assert_eq!(
        n.axil_write_priv(page + regs::CH_PDID, 3),
        AxilResp::SlvErr,
        "read-only even to the kernel"
    );
    assert_eq!(n.axil_read(page + regs::CH_PDID), 9);
    assert_eq!(n.axil_read(page + regs::CH_ERR), ChError::PdidWrite as u32);
    assert_eq!(n.axil_write(page + regs::CH_ERR, 0), AxilResp::Okay);
    assert_eq!(n.axil_read(page + regs::CH_ERR), 0);

    // Windows read back masked; user cannot touch them.
    let w = |f| regs::win_reg(4, f);
    assert_eq!(n.axil_write(w(regs::WIN_CTRL), 1 << 31), AxilResp::SlvErr);
    for (f, v, back) in [
        (regs::WIN_BASE_LO, 0xDEAD_BEEF, 0xDEAD_BEEF),
        (regs::WIN_BASE_HI, 0xFFFF_FFFF, 0x3FF),
        (regs::WIN_SIZE_LO, 0x1234_5678, 0x1234_5678),
        (regs::WIN_SIZE_HI, 0xFFFF_FFFF, 0x7FF),
        (regs::WIN_CTRL, 0xFFFF_FFFF, 0x8000_FFFF),
    ] {
        assert_eq!(n.axil_write_priv(w(f), v), AxilResp::Okay);
        assert_eq!(n.axil_read_priv(w(f)), back);
    }
    assert_eq!(
        n.axil_write_priv(regs::win_reg(5, 0), 1),
        AxilResp::SlvErr,
        "only 5 windows"
    );
    n.axil_write_priv(regs::MBOX_CTRL, 0xFFFF_FFFF);
    assert_eq!(n.axil_read_priv(regs::MBOX_CTRL), 0x1_FFFF);

    // Unmapped, unaligned, read-only, third channel exists, fourth does not.
    assert_eq!(
        n.axil_read_prot(0x0FFC, Prot::Privileged),
        (0, AxilResp::SlvErr)
    );
    assert_eq!(n.axil_write(regs::ch_page(0) + 2, 1), AxilResp::SlvErr);
    assert_eq!(
        n.axil_write(regs::CQ_PAGE + regs::CQ_COUNT, 1),
        AxilResp::SlvErr
    );
    assert_eq!(n.axil_write_priv(regs::CNT_BASE, 1), AxilResp::SlvErr);
    assert_eq!(
        n.axil_read_prot(regs::ch_page(2), Prot::User).1,
        AxilResp::Okay
    );
    assert_eq!(
        n.axil_read_prot(regs::ch_page(3), Prot::User).1,
        AxilResp::SlvErr
    );
    assert_eq!(
        n.axil_read_prot(regs::ch_page(0) + regs::DOORBELL, Prot::User),
        (0, AxilResp::Okay)
    );

    // Staging and packetizer window read back.
    n.axil_write(regs::ch_page(0) + regs::DESC_CTRL, 0xFFFF_FFFF);
    assert_eq!(n.axil_read(regs::ch_page(0) + regs::DESC_CTRL), 0x3FFF_0013);
    n.axil_write(regs::ch_page(0) + regs::PKT_DATA + 60, 0x0102_0304);
    assert_eq!(
        n.axil_read(regs::ch_page(0) + regs::PKT_DATA + 60),
        0x0102_0304
    );
    assert_eq!(
        n.axil_read_prot(regs::ch_page(0) + regs::PKT_DATA + 64, Prot::User)
            .1,
        AxilResp::SlvErr
    );
    // Empty queues read zero.
    assert_eq!(n.axil_read(regs::CQ_PAGE + regs::CQ_W0), 0);
    assert_eq!(n.axil_read(regs::MB_PAGE + regs::MB_DATA), 0);
    assert_eq!(
        n.axil_write(regs::CQ_PAGE + regs::CQ_POP, 0),
        AxilResp::Okay
    );
}

#[test]
fn refused_doorbells_and_sends_latch_their_code_and_change_nothing() {
    let p = NiParams {
        desc_queue_depth: 2,
        pkt_slots: 1,
        ..Default::default()
    };
    let mut n = open(&p, x());
    let page = regs::ch_page(0);
    let code = |n: &Ni| n.axil_read(page + regs::CH_ERR);
    let mut bad_op = write(10, 0, y(), 0);
    bad_op.op = Op::Read;
    // op = 2 cannot be expressed by Descriptor: write the staging directly.
    driver::post(&mut n, 0, &bad_op);
    n.axil_write(page + regs::DESC_CTRL, 2);
    assert_eq!(n.axil_write(page + regs::DOORBELL, 1), AxilResp::SlvErr);
    assert_eq!(code(&n), ChError::BadOp as u32);
    assert_eq!(
        driver::post(&mut n, 0, &write(0, 0, y(), 0)),
        AxilResp::SlvErr
    );
    assert_eq!(code(&n), ChError::BadLen as u32);
    assert_eq!(
        driver::post(&mut n, 0, &write(2, (1 << 42) - 1, y(), 0)),
        AxilResp::SlvErr
    );
    assert_eq!(code(&n), ChError::BadAddr as u32);
    let mut far = write(0x100, 0, y(), 0);
    far.laddr = (1 << 40) - 0xFF;
    assert_eq!(driver::post(&mut n, 0, &far), AxilResp::SlvErr);
    assert_eq!(code(&n), ChError::BadAddr as u32);
    assert_eq!(driver::desc_free(&n, 0), 1, "only the good read was queued");
    assert_eq!(
        driver::post(&mut n, 0, &write(1, 0, y(), 0)),
        AxilResp::Okay
    );
    assert_eq!(
        driver::post(&mut n, 0, &write(1, 0, y(), 0)),
        AxilResp::SlvErr
    );
    assert_eq!(code(&n), ChError::QueueFull as u32);
    assert_eq!(driver::desc_free(&n, 0), 0);

    assert_eq!(driver::send_message(&mut n, 0, y(), &[]), AxilResp::SlvErr);
    assert_eq!(code(&n), ChError::PktBadLen as u32);
    assert_eq!(
        driver::send_message(&mut n, 0, y(), &[1; 65]),
        AxilResp::SlvErr
    );
    assert_eq!(code(&n), ChError::PktBadLen as u32);
    assert_eq!(
        driver::send_message(&mut n, 0, y(), &[1; 64]),
        AxilResp::Okay
    );
    assert_eq!(
        driver::send_message(&mut n, 0, y(), &[1; 4]),
        AxilResp::SlvErr
    );
    assert_eq!(code(&n), ChError::PktFull as u32);
    let st = n.axil_read(page + regs::CH_STATUS);
    assert_eq!(
        st,
        1 << 24 | 1 << 25,
        "no free slots, RDMA busy, message pending"
    );
    let out: Vec<_> = std::iter::from_fn(|| n.emit_packet())
        .map(|p| kind(&p).0)
        .collect();
    assert_eq!(
        out,
        [
            PacketType::Mailbox,
            PacketType::RdmaReadReq,
            PacketType::RdmaWrite
        ]
    );
}

/// Responses, then the read-serve engine, then channels round-robin with
/// each channel's message before its RDMA packets; a response arriving
/// midway goes next.
#[test]
fn emission_order_is_exact() {
    let p = NiParams {
        channels: 3,
        ..Default::default()
    };
    let mut n = open(&p, x());
    let mut peer = open(&p, y());
    // Work for the channels.
    driver::post(&mut n, 0, &write(600, 0x2000, y(), 1));
    let mut rd = write(64, 0x3000, y(), 2);
    rd.op = Op::Read;
    driver::post(&mut n, 1, &rd);
    driver::send_message(&mut n, 1, y(), b"one");
    driver::send_message(&mut n, 2, y(), b"two");
    driver::post(&mut n, 2, &write(20, 0x4000, y(), 3));
    // A message and a read request arrive from the peer.
    driver::send_message(&mut peer, 0, x(), b"hi");
    let mut req = write(300, 0x5000, x(), 4);
    req.op = Op::Read;
    driver::post(&mut peer, 0, &req);
    let m = peer.emit_packet().unwrap();
    let r = peer.emit_packet().unwrap();
    assert_eq!(kind(&r).0, PacketType::RdmaReadReq);
    assert_eq!(n.receive_packet(&r), RxOutcome::Accepted);
    assert_eq!(n.receive_packet(&m), RxOutcome::Accepted);

    use PacketType::*;
    let mut got = Vec::new();
    for _ in 0..7 {
        got.push(kind(&n.emit_packet().unwrap()));
    }
    assert_eq!(
        got,
        vec![
            (MailboxAck, 0, y()),
            (RdmaReadResp, 256, y()),
            (RdmaReadResp, 44, y()),
            (RdmaWrite, 256, y()), // ch0
            (Mailbox, 3, y()),     // ch1: message first
            (Mailbox, 3, y()),     // ch2: message first
            (RdmaWrite, 256, y()), // ch0
        ]
    );
    // A message arrives now: its ack goes before any channel.
    driver::send_message(&mut peer, 0, x(), b"again");
    let m2 = std::iter::from_fn(|| peer.emit_packet())
        .find(|p| kind(p).0 == Mailbox)
        .unwrap();
    n.receive_packet(&m2);
    let rest: Vec<_> = std::iter::from_fn(|| n.emit_packet())
        .map(|p| kind(&p))
        .collect();
    assert_eq!(
        rest,
        vec![
            (MailboxAck, 0, y()),
            (RdmaReadReq, 16, y()), // ch1
            (RdmaWrite, 20, y()),   // ch2
            (RdmaWrite, 88, y()),   // ch0
        ]
    );
    assert_eq!(driver::counter(&n, cnt::TX_PACKETS), 11);
    assert_eq!(
        driver::counter(&n, cnt::TX_PAYLOAD_BYTES),
        256 + 44 + 256 + 3 + 3 + 256 + 16 + 20 + 88
    );
}

#[test]
fn tx_enable_stops_requests_not_responses() {
    let p = NiParams::default();
    let mut n = open(&p, x());
    let mut peer = open(&p, y());
    n.axil_write_priv(regs::CONTROL, 0);
    driver::post(&mut n, 0, &write(10, 0, y(), 1));
    assert!(n.emit_packet().is_none());
    driver::send_message(&mut peer, 0, x(), b"m");
    n.receive_packet(&peer.emit_packet().unwrap());
    assert_eq!(kind(&n.emit_packet().unwrap()).0, PacketType::MailboxAck);
    assert!(n.emit_packet().is_none());
    n.axil_write_priv(regs::CONTROL, 1);
    assert_eq!(kind(&n.emit_packet().unwrap()).0, PacketType::RdmaWrite);
}

fn single_write(from: &mut Ni, to: Coords, raddr: u64, txid: u16, notify: bool) -> Packet {
    let mut d = write(8, raddr, to, txid);
    d.notify = notify;
    driver::post(from, 0, &d);
    from.emit_packet().unwrap()
}

#[test]
fn busy_when_a_needed_queue_is_full_and_nothing_changes() {
    let p = NiParams {
        cq_depth: 1,
        resp_queue_depth: 1,
        read_queue_depth: 1,
        ..Default::default()
    };
    let mut n = open(&p, x());
    let mut peer = open(&p, y());
    n.set_write_log(true);
    peer.mem_mut().write(0x10_0000, &[1, 2, 3, 4, 5, 6, 7, 8]);
    // Completion queue.
    let w1 = single_write(&mut peer, x(), 0x100, 1, false);
    let w2 = single_write(&mut peer, x(), 0x200, 2, false);
    assert_eq!(n.receive_packet(&w1), RxOutcome::Accepted);
    let mem = n.mem().clone();
    assert_eq!(n.receive_packet(&w2), RxOutcome::Busy);
    assert_eq!(n.mem(), &mem);
    assert_eq!(driver::counter(&n, cnt::RX_PACKETS), 1);
    assert_eq!(driver::pop_completion(&mut n).unwrap().txid, 1);
    assert_eq!(n.receive_packet(&w2), RxOutcome::Accepted);
    assert_eq!(driver::pop_completion(&mut n).unwrap().txid, 2);
    let log = n.take_writes();
    assert_eq!(
        log,
        vec![
            MemWrite {
                addr: 0x100,
                data: vec![1, 2, 3, 4, 5, 6, 7, 8]
            },
            MemWrite {
                addr: 0x200,
                data: vec![1, 2, 3, 4, 5, 6, 7, 8]
            }
        ]
    );
    // Response queue: a notify write needs a slot; a message needs one.
    let w3 = single_write(&mut peer, x(), 0x300, 3, true);
    driver::send_message(&mut peer, 0, x(), b"m");
    let m = peer.emit_packet().unwrap();
    assert_eq!(n.receive_packet(&w3), RxOutcome::Accepted);
    assert_eq!(n.receive_packet(&m), RxOutcome::Busy);
    assert_eq!(n.axil_read(regs::MB_PAGE + regs::MB_COUNT), 0);
    assert_eq!(
        kind(&n.emit_packet().unwrap()).0,
        PacketType::RdmaCompletion
    );
    assert_eq!(n.receive_packet(&m), RxOutcome::Accepted);
    assert_eq!(kind(&n.emit_packet().unwrap()).0, PacketType::MailboxAck);
    driver::pop_completion(&mut n).unwrap();
    // Read queue: a request finding it full is refused with a
    // Nack(READ_BUSY) (which needs a response-queue slot) and never waits
    // for the read queue; with the response queue full too, it waits.
    let mut rd = write(300, 0x10_0000, x(), 4);
    rd.op = Op::Read;
    rd.laddr = 0x9000;
    for txid in 4..=6 {
        driver::post(&mut peer, 0, &Descriptor { txid, ..rd });
    }
    let r1 = peer.emit_packet().unwrap();
    let r2 = peer.emit_packet().unwrap();
    let r3 = peer.emit_packet().unwrap();
    assert_eq!(n.receive_packet(&r1), RxOutcome::Accepted);
    assert_eq!(n.receive_packet(&r2), RxOutcome::Refused);
    assert_eq!(
        n.receive_packet(&r3),
        RxOutcome::Busy,
        "response queue full (the first Nack)"
    );
    for txid in [5, 6] {
        let nack = n.emit_response().unwrap();
        let f = Footer::from_bits(nack.footer_word()).unwrap();
        assert_eq!(
            (kind(&nack).0, f.flags(), f.txid()),
            (PacketType::Nack, NACK_READ_BUSY, txid)
        );
        if txid == 5 {
            assert_eq!(n.receive_packet(&r3), RxOutcome::Refused);
        }
    }
    assert_eq!(driver::counter(&n, cnt::RD_BUSY_NACKS), 2);
    assert_eq!(driver::counter(&n, cnt::RX_REJECTED), 0);
    // Once the first request is served, a request is accepted again.
    n.emit_packet().unwrap();
    let last = n.emit_packet().unwrap();
    assert!(Footer::from_bits(last.footer_word()).unwrap().last());
    driver::post(&mut peer, 0, &Descriptor { txid: 7, ..rd });
    let r4 = peer.emit_packet().unwrap();
    assert_eq!(n.receive_packet(&r4), RxOutcome::Accepted);
}

#[test]
fn status_live_bits_and_mailbox_words() {
    let p = NiParams::default();
    let mut n = open(&p, x());
    let mut peer = open(&p, y());
    assert_eq!(n.axil_read_priv(regs::STATUS), 0);
    driver::send_message(&mut peer, 0, x(), &[9, 8, 7, 6, 5]);
    n.receive_packet(&peer.emit_packet().unwrap());
    let w = single_write(&mut peer, x(), 0x40, 1, false);
    n.receive_packet(&w);
    assert_eq!(
        n.axil_read_priv(regs::STATUS),
        regs::ST_CQ_NONEMPTY | regs::ST_MB_NONEMPTY
    );
    assert_eq!(n.axil_read(regs::MB_PAGE + regs::MB_LEN), 5);
    assert_eq!(n.axil_read(regs::MB_PAGE + regs::MB_SRC), y().to_bits());
    assert_eq!(n.axil_read(regs::MB_PAGE + regs::MB_DATA), 0x0607_0809);
    assert_eq!(n.axil_read(regs::MB_PAGE + regs::MB_DATA + 4), 5);
    assert_eq!(n.axil_read(regs::MB_PAGE + regs::MB_DATA + 8), 0);
    let w0 = n.axil_read(regs::CQ_PAGE + regs::CQ_W0);
    assert_eq!(w0, 1 | 1 << 16, "WRITE_IN, OK, txid 1");
    assert_eq!(n.axil_read(regs::CQ_PAGE + regs::CQ_W0 + 4), y().to_bits());
    n.axil_write(regs::CQ_PAGE + regs::CQ_POP, 0);
    n.axil_write(regs::MB_PAGE + regs::MB_POP, 0);
    assert_eq!(n.axil_read_priv(regs::STATUS), 0);
}

/// Explicit events: an accepted data packet's completion and notify
/// response wait for `write_landed` (the memory bytes do not); the slots
/// they will take are held meanwhile (Busy counts them); a packet without
/// `last` posts nothing when it lands; landing with nothing in flight is an
/// error; turning the events off posts what is pending.
#[test]
fn completion_and_notify_wait_for_the_write_to_land() {
    let p = NiParams {
        cq_depth: 1,
        resp_queue_depth: 1,
        ..Default::default()
    };
    let mut n = open(&p, x());
    let mut peer = open(&p, y());
    peer.mem_mut().write(0x10_0000, &[1, 2, 3, 4, 5, 6, 7, 8]);
    n.set_explicit_events(true);
    let w1 = single_write(&mut peer, x(), 0x100, 1, true);
    assert_eq!(n.receive_packet(&w1), RxOutcome::Accepted);
    assert_eq!(n.mem().read(0x100, 8), vec![1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(n.writes_in_flight(), 1);
    assert_eq!(n.axil_read(regs::CQ_PAGE + regs::CQ_COUNT), 0);
    assert_eq!(n.axil_read_priv(regs::STATUS) & regs::ST_CQ_NONEMPTY, 0);
    assert!(!n.has_packet(), "no RdmaCompletion before the data landed");
    // The held slots: another completion or response must wait.
    let w2 = single_write(&mut peer, x(), 0x200, 2, false);
    assert_eq!(n.receive_packet(&w2), RxOutcome::Busy);
    driver::send_message(&mut peer, 0, x(), b"m");
    let m = peer.emit_packet().unwrap();
    assert_eq!(n.receive_packet(&m), RxOutcome::Busy);
    let e = n.write_landed().unwrap().expect("a completion");
    assert_eq!((e.txid, e.peer), (1, y()));
    assert_eq!(n.axil_read(regs::CQ_PAGE + regs::CQ_COUNT), 1);
    assert_eq!(
        kind(&n.emit_packet().unwrap()).0,
        PacketType::RdmaCompletion
    );
    assert!(n.write_landed().is_err(), "nothing in flight");
    assert_eq!(driver::pop_completion(&mut n).unwrap().txid, 1);
    // A packet that is not the last of its transfer posts nothing.
    let mut d = write(600, 0x1000, x(), 3);
    d.laddr = 0x10_0000;
    driver::post(&mut peer, 0, &d);
    let first = peer.emit_packet().unwrap();
    assert_eq!(n.receive_packet(&first), RxOutcome::Accepted);
    assert_eq!(n.write_landed().unwrap(), None);
    // Off: pending postings are made.
    let rest = peer.emit_packet().unwrap();
    assert_eq!(n.receive_packet(&rest), RxOutcome::Accepted);
    n.receive_packet(&peer.emit_packet().unwrap());
    assert_eq!(n.axil_read(regs::CQ_PAGE + regs::CQ_COUNT), 0);
    n.set_explicit_events(false);
    assert_eq!(n.writes_in_flight(), 0);
    assert_eq!(driver::pop_completion(&mut n).unwrap().txid, 3);
}

/// Explicit events: an acknowledgement naming a message whose packet is
/// still leaving (tail not sent) is Stale — the slot is neither freed nor
/// re-queued; after `packet_left` the same ack is taken.
#[test]
fn an_ack_before_the_message_has_left_is_stale() {
    let p = NiParams::default();
    let mut a = open(&p, x());
    let mut b = open(&p, y());
    a.set_explicit_events(true);
    driver::send_message(&mut a, 1, y(), b"hello");
    let msg = a.emit_packet().unwrap();
    assert_eq!(b.receive_packet(&msg), RxOutcome::Accepted);
    let ack = b.emit_packet().unwrap();
    let free = driver::pkt_free(&a, 1);
    assert_eq!(
        a.receive_packet(&ack),
        RxOutcome::Rejected(exanet_sim::ni::RejectReason::Stale)
    );
    assert_eq!(driver::pkt_free(&a, 1), free, "slot not freed");
    assert!(!a.has_packet(), "not re-queued either");
    a.packet_left(&msg);
    assert_eq!(a.receive_packet(&ack), RxOutcome::Accepted);
    assert_eq!(driver::pkt_free(&a, 1), free + 1);
}
