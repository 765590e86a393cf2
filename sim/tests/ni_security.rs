//! NI golden model: protection and corruption. A rejected packet (forged
//! PDID, outside every window, corrupted payload, uncorrectable header,
//! corrupted footer, misrouted) changes no byte of memory, is counted and
//! reported; a single-bit header error is corrected and accepted; a
//! transfer that lost a packet never completes "OK".

use exanet_sim::ni::driver;
use exanet_sim::ni::errors::RejectReason;
use exanet_sim::ni::regs::{self, cnt};
use exanet_sim::ni::{
    AxilResp, CqKind, CqStatus, Descriptor, Ni, NiParams, Op, Packet, RxOutcome, SparseMemory,
};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{Header, PacketType};
use exanet_sim::rng::Rng;

const WIN: u64 = 0x10_0000;
const WIN_SIZE: u64 = 0x10_0000;
const GOOD: u16 = 7;
const FORGED: u16 = 8;

fn a_at() -> Coords {
    Coords::new(0, 0, 0, 0).unwrap()
}
fn b_at() -> Coords {
    Coords::new(1, 0, 0, 0).unwrap()
}

/// A: channel 0 PDID 7, channel 1 PDID 8, window over its own [WIN, +size)
/// for PDID 7. B: same window. Both memories hold a pattern around it.
fn pair(p: &NiParams) -> (Ni, Ni) {
    let mk = |c: Coords, seed: u64| {
        let mut n = Ni::new(p, c).unwrap();
        driver::set_channel_pdid(&mut n, 0, GOOD).unwrap();
        driver::set_channel_pdid(&mut n, 1, FORGED).unwrap();
        driver::set_window(&mut n, 0, WIN, WIN_SIZE, GOOD).unwrap();
        let mut rng = Rng::new(seed);
        let pat: Vec<u8> = (0..0x40_0000).map(|_| rng.bits(8) as u8).collect();
        n.mem_mut().write(0, &pat);
        n
    };
    (mk(a_at(), 1), mk(b_at(), 2))
}

fn write(ch_len_to: (u32, u64), laddr: u64, notify: bool, txid: u16) -> Descriptor {
    Descriptor {
        op: Op::Write,
        laddr,
        raddr: ch_len_to.1,
        len: ch_len_to.0,
        dest: b_at(),
        notify,
        txid,
    }
}

fn drain(n: &mut Ni) -> Vec<Packet> {
    std::iter::from_fn(|| n.emit_packet()).collect()
}

fn header(p: &Packet) -> Header {
    Header::from_bits(p.header_word()).unwrap()
}

fn rx_all(n: &mut Ni, ps: &[Packet]) -> Vec<RxOutcome> {
    ps.iter().map(|p| n.receive_packet(p)).collect()
}

#[test]
fn forged_pdid_writes_nothing_and_is_reported() {
    let (mut a, mut b) = pair(&NiParams::default());
    let before = b.mem().clone();
    assert_eq!(
        driver::post(&mut a, 1, &write((1000, WIN + 3), 0x1000, true, 42)),
        AxilResp::Okay
    );
    let ps = drain(&mut a);
    assert_eq!(ps.len(), 4);
    let out = rx_all(&mut b, &ps);
    assert!(
        out.iter()
            .all(|o| *o == RxOutcome::Rejected(RejectReason::Pdid)),
        "{out:?}"
    );
    assert_eq!(b.mem(), &before, "no byte changed");
    assert_eq!(driver::rejections(&b, RejectReason::Pdid), 4);
    assert_eq!(driver::counter(&b, cnt::RX_REJECTED), 4);
    assert_eq!(driver::counter(&b, cnt::RX_DATA_BYTES), 0);
    assert_ne!(b.axil_read_priv(regs::STATUS) & regs::ST_RX_ERROR, 0);
    for _ in 0..4 {
        let e = driver::pop_error(&mut b).unwrap();
        assert_eq!(e.reason, Some(RejectReason::Pdid));
        assert!(e.header_ok && e.footer_ok);
        assert_eq!(
            (e.src, e.txid, e.pdid, e.ptype),
            (a_at(), 42, FORGED, Some(PacketType::RdmaWrite))
        );
    }
    assert!(driver::pop_error(&mut b).is_none());
    assert!(driver::pop_completion(&mut b).is_none(), "no completion");
    assert!(b.emit_packet().is_none(), "no notification");
    // W1C clears the sticky bit.
    b.axil_write_priv(regs::STATUS, regs::ST_RX_ERROR);
    assert_eq!(b.axil_read_priv(regs::STATUS) & regs::ST_RX_ERROR, 0);
}

#[test]
fn outside_the_window_writes_nothing() {
    let (mut a, mut b) = pair(&NiParams::default());
    let before = b.mem().clone();
    driver::post(&mut a, 0, &write((300, WIN + WIN_SIZE), 0x1000, false, 1));
    driver::post(&mut a, 0, &write((1, WIN - 1), 0x1000, false, 2));
    driver::post(&mut a, 0, &write((16, (1 << 40) - 8), 0x1000, false, 3));
    let out = rx_all(&mut b, &drain(&mut a));
    // 256 + 44, 1, 8 + 8 (the second half lies beyond 2^addr_bits).
    assert_eq!(out, vec![RxOutcome::Rejected(RejectReason::Window); 5]);
    assert_eq!(b.mem(), &before);
    assert_eq!(driver::rejections(&b, RejectReason::Window), 5);
}

/// A write straddling the window's end: in-window packets land, the last
/// (outside) is rejected, so the transfer never completes.
#[test]
fn straddling_the_window_end_lands_only_inside_and_never_completes() {
    let (mut a, mut b) = pair(&NiParams::default());
    let before = b.mem().clone();
    let land = WIN + WIN_SIZE - 512;
    driver::post(&mut a, 0, &write((700, land), 0x2000, true, 5));
    let out = rx_all(&mut b, &drain(&mut a));
    assert_eq!(
        out,
        vec![
            RxOutcome::Accepted,
            RxOutcome::Accepted,
            RxOutcome::Rejected(RejectReason::Window)
        ]
    );
    let mut want = before.clone();
    want.write(land, &a.mem().read(0x2000, 512));
    assert_eq!(b.mem(), &want);
    assert!(driver::pop_completion(&mut b).is_none());
    assert!(b.emit_packet().is_none());
    assert_eq!(b.damaged_transfers(), 0);
}

/// A write straddling the window's start: the rejected first packets mark
/// the transfer damaged, so its completion (and notification) say so.
#[test]
fn straddling_the_window_start_completes_with_packet_rejected() {
    let (mut a, mut b) = pair(&NiParams::default());
    let before = b.mem().clone();
    let land = WIN - 300;
    driver::post(&mut a, 0, &write((900, land), 0x2000, true, 6));
    let out = rx_all(&mut b, &drain(&mut a));
    assert_eq!(out[..2], [RxOutcome::Rejected(RejectReason::Window); 2]);
    assert!(out[2..].iter().all(|o| *o == RxOutcome::Accepted));
    let mut want = before.clone();
    want.write(WIN, &a.mem().read(0x2000 + 300, 600));
    assert_eq!(b.mem(), &want);
    let e = driver::pop_completion(&mut b).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid),
        (CqKind::WriteIn, CqStatus::PacketRejected, 6)
    );
    let n = b.emit_packet().unwrap();
    a.receive_packet(&n);
    let e = driver::pop_completion(&mut a).unwrap();
    assert_eq!(
        (e.kind, e.status),
        (CqKind::Notify, CqStatus::PacketRejected)
    );
    assert_eq!(
        b.damaged_transfers(),
        0,
        "the mark is gone with the completion"
    );
}

#[test]
fn corrupted_payload_writes_nothing_of_that_packet() {
    let (mut a, mut b) = pair(&NiParams::default());
    let before = b.mem().clone();
    let land = WIN + 0x80;
    driver::post(&mut a, 0, &write((600, land), 0x3000, false, 9));
    let mut ps = drain(&mut a);
    assert_eq!(ps.len(), 3);
    ps[1].words[5] ^= 1 << 64;
    let out = rx_all(&mut b, &ps);
    assert_eq!(out[1], RxOutcome::Rejected(RejectReason::PayloadCrc));
    let mut want = before.clone();
    let src = a.mem().read(0x3000, 600);
    want.write(land, &src[..0x80]);
    want.write(land + 0x80 + 256, &src[0x80 + 256..]);
    assert_eq!(b.mem(), &want, "packet 1's 256 bytes untouched");
    assert_eq!(driver::rejections(&b, RejectReason::PayloadCrc), 1);
    let e = driver::pop_completion(&mut b).unwrap();
    assert_eq!(e.status, CqStatus::PacketRejected);
    let e = driver::pop_error(&mut b).unwrap();
    assert_eq!(
        (e.reason, e.vaddr, e.size),
        (Some(RejectReason::PayloadCrc), land + 0x80, 256)
    );
}

fn one_packet(a: &mut Ni, land: u64, len: u32, txid: u16) -> Packet {
    driver::post(a, 0, &write((len, land), 0x5000, false, txid));
    let ps = drain(a);
    assert_eq!(ps.len(), 1);
    ps.into_iter().next().unwrap()
}

#[test]
fn double_header_errors_are_rejected_single_errors_corrected() {
    let (mut a, mut b) = pair(&NiParams::default());
    let before = b.mem().clone();
    let pk = one_packet(&mut a, WIN + 0x100, 200, 77);
    let mut rng = Rng::new(3);
    for k in 0..300 {
        let i = rng.below(120) as u32;
        let j = (i + 1 + rng.below(119) as u32) % 120;
        let mut bad = pk.clone();
        bad.words[0] ^= 1u128 << i | 1u128 << j;
        assert_eq!(
            b.receive_packet(&bad),
            RxOutcome::Rejected(RejectReason::HeaderEcc),
            "bits {i} {j}"
        );
        assert_eq!(b.mem(), &before, "bits {i} {j}");
        if k < 5 {
            let e = driver::pop_error(&mut b).unwrap();
            assert!(!e.header_ok && e.footer_ok);
            assert_eq!((e.txid, e.src), (77, a_at()));
        }
    }
    assert_eq!(driver::rejections(&b, RejectReason::HeaderEcc), 300);
    let mut want = before.clone();
    want.write(WIN + 0x100, &a.mem().read(0x5000, 200));
    for bit in 0..120 {
        let mut one = pk.clone();
        one.words[0] ^= 1u128 << bit;
        assert_eq!(b.receive_packet(&one), RxOutcome::Accepted, "bit {bit}");
        assert_eq!(b.mem(), &want, "bit {bit}");
        let e = driver::pop_completion(&mut b).unwrap();
        assert_eq!((e.status, e.txid), (CqStatus::Ok, 77));
    }
    assert_eq!(driver::counter(&b, cnt::HDR_CORRECTED), 120);
    assert_ne!(b.axil_read_priv(regs::STATUS) & regs::ST_HDR_CORRECTED, 0);
}

#[test]
fn corrupted_footer_loses_track_until_software_clears_it() {
    let (mut a, mut b) = pair(&NiParams::default());
    let before = b.mem().clone();
    let pk = one_packet(&mut a, WIN, 64, 1);
    let mut bad = pk.clone();
    let last = bad.words.len() - 1;
    bad.words[last] ^= 1 << 50;
    assert_eq!(
        b.receive_packet(&bad),
        RxOutcome::Rejected(RejectReason::FooterCrc)
    );
    assert_eq!(b.mem(), &before);
    assert_ne!(b.axil_read_priv(regs::STATUS) & regs::ST_TRACK_LOST, 0);
    let e = driver::pop_error(&mut b).unwrap();
    assert!(e.header_ok && !e.footer_ok);
    assert_eq!(b.receive_packet(&pk), RxOutcome::Accepted);
    assert_eq!(
        driver::pop_completion(&mut b).unwrap().status,
        CqStatus::Untracked
    );
    b.axil_write_priv(regs::STATUS, regs::ST_TRACK_LOST);
    assert_eq!(b.receive_packet(&pk), RxOutcome::Accepted);
    assert_eq!(driver::pop_completion(&mut b).unwrap().status, CqStatus::Ok);
}

#[test]
fn misrouted_packet_is_rejected() {
    let (mut a, mut b) = pair(&NiParams::default());
    let pk = one_packet(&mut a, WIN, 64, 1);
    let before = a.mem().clone();
    assert_eq!(
        a.receive_packet(&pk),
        RxOutcome::Rejected(RejectReason::Misrouted)
    );
    assert_eq!(a.mem(), &before);
    assert_eq!(b.receive_packet(&pk), RxOutcome::Accepted);
    // A message for a third node that reaches B is not answered by B.
    driver::set_mailbox(&mut b, 0, true).unwrap();
    let c = Coords::new(2, 0, 0, 0).unwrap();
    assert_eq!(driver::send_message(&mut a, 0, c, b"hi"), AxilResp::Okay);
    let m = a.emit_packet().unwrap();
    assert_eq!(
        b.receive_packet(&m),
        RxOutcome::Rejected(RejectReason::Misrouted)
    );
    assert!(
        b.emit_packet().is_none(),
        "no answer from a node that is not the destination"
    );
}

#[test]
fn read_outside_the_servers_window_is_denied_back_to_the_requester() {
    let (mut a, mut b) = pair(&NiParams::default());
    let (a0, b0) = (a.mem().clone(), b.mem().clone());
    for (ch, raddr, reason) in [
        (0, WIN + WIN_SIZE - 4, RejectReason::Window),
        (1, WIN, RejectReason::Pdid),
    ] {
        let d = Descriptor {
            op: Op::Read,
            laddr: WIN,
            raddr,
            len: 64,
            dest: b_at(),
            notify: true,
            txid: 11,
        };
        assert_eq!(driver::post(&mut a, ch, &d), AxilResp::Okay);
        let req = drain(&mut a);
        assert_eq!(rx_all(&mut b, &req), vec![RxOutcome::Rejected(reason)]);
        let nack = drain(&mut b);
        assert_eq!(nack.len(), 1, "only the nack, no data");
        assert_eq!(header(&nack[0]).ptype(), PacketType::Nack);
        assert_eq!(a.receive_packet(&nack[0]), RxOutcome::Accepted);
        let e = driver::pop_completion(&mut a).unwrap();
        assert_eq!(
            (e.kind, e.status, e.reason, e.txid, e.peer),
            (
                CqKind::ReadDone,
                CqStatus::RemoteDenied,
                reason.code(),
                11,
                b_at()
            )
        );
    }
    assert_eq!(a.mem(), &a0);
    assert_eq!(b.mem(), &b0);
}

/// The requester's own windows guard where read data lands.
#[test]
fn read_response_outside_the_requesters_window_writes_nothing() {
    let (mut a, mut b) = pair(&NiParams::default());
    let a0 = a.mem().clone();
    let d = Descriptor {
        op: Op::Read,
        laddr: WIN - 0x1000,
        raddr: WIN,
        len: 300,
        dest: b_at(),
        notify: false,
        txid: 12,
    };
    driver::post(&mut a, 0, &d);
    rx_all(&mut b, &drain(&mut a));
    let resp = drain(&mut b);
    assert_eq!(resp.len(), 2);
    assert!(resp
        .iter()
        .all(|p| header(p).ptype() == PacketType::RdmaReadResp));
    assert_eq!(
        rx_all(&mut a, &resp),
        vec![RxOutcome::Rejected(RejectReason::Window); 2]
    );
    assert_eq!(a.mem(), &a0);
    assert!(driver::pop_completion(&mut a).is_none());
}

/// Random single-packet writes with random damage: an intact packet (or
/// one with a single header error) lands exactly; every damaged one
/// (2 header bits, 1..3 payload bits, 1..3 footer bits, wrong PDID,
/// outside the window) changes nothing.
#[test]
fn fuzzed_damage_never_writes_memory() {
    let p = NiParams::default();
    let (_, mut b) = pair(&p);
    let mut rng = Rng::new(17);
    let mut shadow: SparseMemory = b.mem().clone();
    let mut rejected = 0;
    for txid in 0..4000u16 {
        let len = 1 + rng.below(256) as usize;
        let off = rng.below(256 - len as u64 + 1);
        let vaddr = if rng.chance(0.05) {
            WIN + WIN_SIZE + off
        } else {
            WIN + 256 * rng.below(WIN_SIZE / 256 - 1) + off
        };
        let pdid = if rng.chance(0.05) { FORGED } else { GOOD };
        let mut h = Header::new(PacketType::RdmaWrite, b_at());
        h.set_vaddr(vaddr).unwrap().set_pdid(pdid).unwrap();
        let mut f = Footer::new(a_at());
        f.set_first(true).set_last(true);
        f.set_txid(txid & 0x3FFF).unwrap();
        let data: Vec<u8> = (0..len).map(|_| rng.bits(8) as u8).collect();
        let mut pk = Packet::build(h, f, &data);
        let kind = rng.below(6);
        let flip = |pk: &mut Packet, bit: u64| {
            let (w, b) = ((bit / 128) as usize, bit % 128);
            pk.words[w] ^= 1u128 << b;
        };
        match kind {
            1 => flip(&mut pk, rng.below(120)),
            2 => {
                let i = rng.below(120);
                flip(&mut pk, i);
                flip(&mut pk, (i + 1 + rng.below(119)) % 120);
            }
            3 => {
                // 1..3 distinct payload bits within the `len` valid bytes.
                let mut bits: Vec<u64> = Vec::new();
                while bits.len() < 1 + rng.below(3) as usize {
                    let b = rng.below(8 * len as u64);
                    if !bits.contains(&b) {
                        bits.push(b);
                    }
                }
                for b in bits {
                    flip(&mut pk, 128 + (b / 128) * 128 + b % 128);
                }
            }
            4 => {
                let base = 128 * (pk.words.len() as u64 - 1);
                let mut bits: Vec<u64> = Vec::new();
                while bits.len() < 1 + rng.below(3) as usize {
                    let b = rng.below(128);
                    if !bits.contains(&b) {
                        bits.push(b);
                    }
                }
                for b in bits {
                    flip(&mut pk, base + b);
                }
            }
            _ => {}
        }
        let intact = kind <= 1 || kind == 5;
        let allowed = pdid == GOOD && vaddr < WIN + WIN_SIZE;
        let o = b.receive_packet(&pk);
        if intact && allowed {
            assert_eq!(o, RxOutcome::Accepted, "txid {txid} kind {kind}");
            shadow.write(vaddr, &data);
            driver::pop_completion(&mut b).unwrap();
        } else {
            assert!(
                matches!(o, RxOutcome::Rejected(_)),
                "txid {txid} kind {kind}: {o:?}"
            );
            rejected += 1;
            // Keep the error queue drained; the tracker lost track after
            // footer errors: reset it so later completions stay readable.
            while driver::pop_error(&mut b).is_some() {}
            b.axil_write_priv(regs::STATUS, regs::ST_STICKY);
        }
        // Around the packet every time, everywhere now and then.
        let near = vaddr.saturating_sub(512);
        assert_eq!(
            b.mem().read(near, 1536),
            shadow.read(near, 1536),
            "txid {txid} kind {kind}"
        );
        if txid % 500 == 0 {
            if let Some(a) = b.mem().first_difference(&shadow) {
                panic!("txid {txid} kind {kind}: memory changed at 0x{a:x}");
            }
        }
    }
    assert_eq!(b.mem(), &shadow);
    assert_eq!(driver::counter(&b, cnt::RX_REJECTED), rejected);
    assert!(rejected > 2000);
}

#[test]
fn error_queue_overflow_is_sticky_and_counts_continue() {
    let p = NiParams {
        errq_depth: 2,
        ..Default::default()
    };
    let (mut a, mut b) = pair(&p);
    driver::post(&mut a, 1, &write((800, WIN), 0, false, 1));
    let ps = drain(&mut a);
    assert_eq!(ps.len(), 4);
    rx_all(&mut b, &ps);
    assert_eq!(b.axil_read_priv(regs::ERRQ_COUNT), 2);
    assert_eq!(driver::counter(&b, cnt::RX_REJECTED), 4);
    let st = b.axil_read_priv(regs::STATUS);
    assert_ne!(st & regs::ST_ERRQ_OVERFLOW, 0);
    assert_ne!(st & regs::ST_ERRQ_NONEMPTY, 0);
    b.axil_write_priv(regs::STATUS, regs::ST_ERRQ_OVERFLOW);
    assert_eq!(b.axil_read_priv(regs::STATUS) & regs::ST_ERRQ_OVERFLOW, 0);
}
