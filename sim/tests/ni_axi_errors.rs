//! NI golden model: AXI4 error responses of its master (the memory's
//! fault map, `SparseMemory::set_fault`) between two NIs joined by the
//! fabric stub. A payload read with a SLVERR / DECERR beat is sent with a
//! stomped payload CRC and zeroed bytes (the receiver rejects it, the
//! transfer completes PACKET_REJECTED), counted in RD_SLVERR / RD_DECERR
//! at the sender; a landing write answered SLVERR / DECERR completes
//! MEM_ERROR at both ends and counts in WR_SLVERR / WR_DECERR; both set
//! the sticky STATUS.AXI_ERROR, which raises `irq` and clears by W1C.

use exanet_sim::ni::driver;
use exanet_sim::ni::fabric::Fabric;
use exanet_sim::ni::memory::resp;
use exanet_sim::ni::regs::{self, cnt};
use exanet_sim::ni::{AxilResp, CqKind, CqStatus, Descriptor, Ni, NiParams, Op, RejectReason};
use exanet_sim::packet::coords::Coords;

const PDID: u16 = 0x123;
const SRC: u64 = 0x10_0000;
const LAND: u64 = 0x80_0000;

fn coords(i: u8) -> Coords {
    Coords::new(i, 0, 1, 0).unwrap()
}

fn node(i: u8) -> Ni {
    let mut n = Ni::new(&NiParams::default(), coords(i)).unwrap();
    driver::set_channel_pdid(&mut n, 0, PDID).unwrap();
    driver::set_window(&mut n, 0, 0, 1 << 32, PDID).unwrap();
    let bytes: Vec<u8> = (0..4096u32).map(|k| (k * 7 + 1) as u8).collect();
    n.mem_mut().write(SRC, &bytes);
    n
}

fn write(fab: &mut Fabric, src: u64, land: u64, len: u32, txid: u16) {
    let d = Descriptor {
        op: Op::Write,
        laddr: src,
        raddr: land,
        len,
        dest: coords(1),
        notify: true,
        txid,
    };
    assert_eq!(driver::post(&mut fab.nodes[0], 0, &d), AxilResp::Okay);
    while !fab.idle() {
        fab.step();
    }
}

fn status(n: &Ni) -> u32 {
    n.axil_read_priv(regs::STATUS)
}

/// A SLVERR beat in the middle packet of a 3-packet write: that packet
/// is rejected PAYLOAD_CRC at the receiver (its bytes never land), the
/// transfer completes PACKET_REJECTED at both ends; RD_SLVERR counts it
/// once at the sender, with STATUS.AXI_ERROR (and `irq` once enabled).
#[test]
fn a_read_error_stomps_the_packet_and_is_counted() {
    let mut fab = Fabric::new(vec![node(0), node(1)]).unwrap();
    fab.nodes[0].mem_mut().set_fault(SRC + 300, resp::SLVERR);
    write(&mut fab, SRC, LAND, 600, 7);
    let (a, b) = (&fab.nodes[0], &fab.nodes[1]);
    assert_eq!(driver::counter(a, cnt::TX_PACKETS), 3);
    assert_eq!(driver::counter(a, cnt::RD_SLVERR), 1);
    assert_eq!(driver::counter(a, cnt::RD_DECERR), 0);
    assert_ne!(status(a) & regs::ST_AXI_ERROR, 0);
    assert_eq!(status(b) & regs::ST_AXI_ERROR, 0);
    assert_eq!(driver::rejections(b, RejectReason::PayloadCrc), 1);
    // The first and last packets landed, the middle one did not.
    assert_eq!(b.mem().read(LAND, 256), a.mem().read(SRC, 256));
    assert_eq!(b.mem().read(LAND + 256, 256), vec![0; 256]);
    assert_eq!(b.mem().read(LAND + 512, 88), a.mem().read(SRC + 512, 88));
    let e = driver::pop_completion(&mut fab.nodes[1]).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid),
        (CqKind::WriteIn, CqStatus::PacketRejected, 7)
    );
    let e = driver::pop_completion(&mut fab.nodes[0]).unwrap();
    assert_eq!(
        (e.kind, e.status),
        (CqKind::Notify, CqStatus::PacketRejected)
    );
    // The interrupt follows STATUS & IRQ_ENABLE; W1C clears the bit.
    let a = &mut fab.nodes[0];
    assert!(!a.irq());
    a.axil_write_priv(regs::IRQ_ENABLE, regs::ST_AXI_ERROR);
    assert!(a.irq());
    a.axil_write_priv(regs::STATUS, regs::ST_AXI_ERROR);
    assert_eq!(status(a) & regs::ST_AXI_ERROR, 0);
    assert!(!a.irq());
    // A DECERR beat in a one-packet write: RD_DECERR; the receiver's
    // completion of the lost last packet never comes (it was rejected).
    fab.nodes[0].mem_mut().set_fault(SRC + 0x800, resp::DECERR);
    write(&mut fab, SRC + 0x7F8, LAND + 0x1000, 40, 8);
    assert_eq!(driver::counter(&fab.nodes[0], cnt::RD_DECERR), 1);
    assert_eq!(driver::counter(&fab.nodes[0], cnt::RD_SLVERR), 1);
    assert!(driver::pop_completion(&mut fab.nodes[1]).is_none());
    assert_eq!(fab.nodes[1].mem().read(LAND + 0x1000, 40), vec![0; 40]);
}

/// A DECERR on the landing write of a one-packet write: the receiver's
/// completion and the sender's notify say MEM_ERROR; WR_DECERR and
/// STATUS.AXI_ERROR at the receiver. A middle packet's SLVERR write is
/// counted (WR_SLVERR) but its transfer's completion does not carry it.
#[test]
fn a_write_error_completes_mem_error() {
    let mut fab = Fabric::new(vec![node(0), node(1)]).unwrap();
    fab.nodes[1].mem_mut().set_fault(LAND + 16, resp::DECERR);
    write(&mut fab, SRC, LAND, 100, 9);
    let b = &fab.nodes[1];
    assert_eq!(driver::counter(b, cnt::WR_DECERR), 1);
    assert_eq!(driver::counter(b, cnt::WR_SLVERR), 0);
    assert_ne!(status(b) & regs::ST_AXI_ERROR, 0);
    assert_eq!(status(&fab.nodes[0]) & regs::ST_AXI_ERROR, 0);
    let e = driver::pop_completion(&mut fab.nodes[1]).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid),
        (CqKind::WriteIn, CqStatus::MemError, 9)
    );
    let e = driver::pop_completion(&mut fab.nodes[0]).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid),
        (CqKind::Notify, CqStatus::MemError, 9)
    );
    fab.nodes[1]
        .mem_mut()
        .set_fault(LAND + 0x2000 + 300, resp::SLVERR);
    write(&mut fab, SRC, LAND + 0x2000, 600, 10);
    assert_eq!(driver::counter(&fab.nodes[1], cnt::WR_SLVERR), 1);
    let e = driver::pop_completion(&mut fab.nodes[1]).unwrap();
    assert_eq!(
        (e.kind, e.status, e.txid),
        (CqKind::WriteIn, CqStatus::Ok, 10)
    );
}
