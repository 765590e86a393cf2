//! Software side: the AXI4-Lite access sequences a driver (privileged) and a
//! user library perform, written once so tests and co-simulation benches
//! drive the model and the RTL the same way. Everything goes through the
//! register map; nothing here touches model internals.

use super::completion::CqEntry;
use super::descriptor::{Descriptor, OP_ALLREDUCE};
use super::errors::{ErrorWords, RejectReason};
use super::mailbox::MailboxEntry;
use super::ni::Ni;
use super::regs::{self, AxilResp};
use crate::allreduce::schedule::CommBox;
use crate::packet::coords::Coords;
use anyhow::{bail, Result};

fn priv_write(ni: &mut Ni, addr: u32, v: u32) -> Result<()> {
    if ni.axil_write_priv(addr, v) != AxilResp::Okay {
        bail!("privileged write 0x{v:x} to NI register 0x{addr:05x} refused (SLVERR)");
    }
    Ok(())
}

/// Program receive window `w`: `[base, base + size)` for `pdid`, enabled.
pub fn set_window(ni: &mut Ni, w: usize, base: u64, size: u64, pdid: u16) -> Result<()> {
    priv_write(ni, regs::win_reg(w, regs::WIN_CTRL), 0)?;
    priv_write(ni, regs::win_reg(w, regs::WIN_BASE_LO), base as u32)?;
    priv_write(ni, regs::win_reg(w, regs::WIN_BASE_HI), (base >> 32) as u32)?;
    priv_write(ni, regs::win_reg(w, regs::WIN_SIZE_LO), size as u32)?;
    priv_write(ni, regs::win_reg(w, regs::WIN_SIZE_HI), (size >> 32) as u32)?;
    priv_write(ni, regs::win_reg(w, regs::WIN_CTRL), pdid as u32 | 1 << 31)
}

/// Set channel `c`'s PDID (privileged).
pub fn set_channel_pdid(ni: &mut Ni, c: usize, pdid: u16) -> Result<()> {
    priv_write(ni, regs::CH_PDID_BASE + 4 * c as u32, pdid as u32)
}

/// Set the mailbox's PDID, or open it to every PDID (privileged).
pub fn set_mailbox(ni: &mut Ni, pdid: u16, open: bool) -> Result<()> {
    priv_write(ni, regs::MBOX_CTRL, pdid as u32 | (open as u32) << 16)
}

/// Program allreduce communicator slot `k` (privileged): disable it, write
/// the box, this node's rank and the scratch area, then enable it with
/// `pdid`. An error names the refused register (a bad box, rank or scratch
/// area is refused at the enabling write).
pub fn set_communicator(
    ni: &mut Ni,
    k: usize,
    comm_box: &CommBox,
    rank: usize,
    pdid: u16,
    scratch: u64,
    scratch_bytes: u32,
) -> Result<()> {
    let reg = |f| regs::ar_comm_reg(k, f);
    let [ox, oy, oz] = comm_box.origin.map(|v| v as u32);
    let [ex, ey, ez] = comm_box.extent.map(|v| v as u32);
    priv_write(ni, reg(regs::AR_CTRL), 0)?;
    priv_write(ni, reg(regs::AR_ORIGIN), ox | oy << 4 | oz << 8)?;
    priv_write(ni, reg(regs::AR_EXTENT), ex | ey << 8 | ez << 16)?;
    priv_write(ni, reg(regs::AR_RANK), rank as u32)?;
    priv_write(ni, reg(regs::AR_SCRATCH_LO), scratch as u32)?;
    priv_write(ni, reg(regs::AR_SCRATCH_HI), (scratch >> 32) as u32)?;
    priv_write(ni, reg(regs::AR_SCRATCH_SIZE), scratch_bytes)?;
    priv_write(ni, reg(regs::AR_CTRL), pdid as u32 | 1 << 31)
}

/// An allreduce as software posts it on a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allreduce {
    /// `reduce_alu` op code.
    pub op: u32,
    /// `reduce_alu` dtype code.
    pub dtype: u32,
    /// Elements.
    pub count: u32,
    /// Source vector.
    pub src: u64,
    /// Destination vector.
    pub dst: u64,
    /// Communicator slot.
    pub comm: u32,
    /// Transaction id (14 bits).
    pub txid: u16,
}

/// Stage an allreduce on channel `c` and ring the doorbell (user): LADDR
/// = source, RADDR = destination, LEN = count, DEST = comm\[3:0\]
/// op\[6:4\] dtype\[9:7\], CTRL = op 2 and the txid.
pub fn post_allreduce(ni: &mut Ni, c: usize, a: &Allreduce) -> AxilResp {
    let page = regs::ch_page(c);
    ni.axil_write(page + regs::DESC_LADDR_LO, a.src as u32);
    ni.axil_write(page + regs::DESC_LADDR_HI, (a.src >> 32) as u32);
    ni.axil_write(page + regs::DESC_RADDR_LO, a.dst as u32);
    ni.axil_write(page + regs::DESC_RADDR_HI, (a.dst >> 32) as u32);
    ni.axil_write(page + regs::DESC_LEN, a.count);
    ni.axil_write(
        page + regs::DESC_DEST,
        (a.comm & 0xF) | (a.op & 7) << 4 | (a.dtype & 7) << 7,
    );
    ni.axil_write(
        page + regs::DESC_CTRL,
        OP_ALLREDUCE | (a.txid as u32 & 0x3FFF) << 16,
    );
    ni.axil_write(page + regs::DOORBELL, 1)
}

/// Stage `d` on channel `c` and ring the doorbell (user); the doorbell's response.
pub fn post(ni: &mut Ni, c: usize, d: &Descriptor) -> AxilResp {
    let page = regs::ch_page(c);
    for (f, v) in d.staging_writes() {
        ni.axil_write(page + f.offset(), v);
    }
    ni.axil_write(page + regs::DOORBELL, 1)
}

/// Write `data` into channel `c`'s packetizer window and send it to `dest`
/// (user); the PKT_SEND response.
pub fn send_message(ni: &mut Ni, c: usize, dest: Coords, data: &[u8]) -> AxilResp {
    let page = regs::ch_page(c);
    for (i, chunk) in data.chunks(4).enumerate() {
        let mut b = [0u8; 4];
        b[..chunk.len()].copy_from_slice(chunk);
        ni.axil_write(page + regs::PKT_DATA + 4 * i as u32, u32::from_le_bytes(b));
    }
    ni.axil_write(page + regs::PKT_DEST, dest.to_bits());
    ni.axil_write(page + regs::PKT_SEND, data.len() as u32)
}

/// Free descriptor slots of channel `c`.
pub fn desc_free(ni: &Ni, c: usize) -> usize {
    (ni.axil_read(regs::ch_page(c) + regs::CH_STATUS) & 0xFFFF) as usize
}

/// Free packetizer slots of channel `c`.
pub fn pkt_free(ni: &Ni, c: usize) -> usize {
    (ni.axil_read(regs::ch_page(c) + regs::CH_STATUS) >> 16 & 0xFF) as usize
}

/// Read and pop the oldest completion (user).
pub fn pop_completion(ni: &mut Ni) -> Option<CqEntry> {
    if ni.axil_read(regs::CQ_PAGE + regs::CQ_COUNT) == 0 {
        return None;
    }
    let w = [0u32, 1, 2].map(|k| ni.axil_read(regs::CQ_PAGE + regs::CQ_W0 + 4 * k));
    ni.axil_write(regs::CQ_PAGE + regs::CQ_POP, 1);
    Some(CqEntry::from_words(w).expect("the NI posts only valid entries"))
}

/// Read and pop the oldest mailbox message (user).
pub fn pop_message(ni: &mut Ni) -> Option<MailboxEntry> {
    let base = regs::MB_PAGE;
    if ni.axil_read(base + regs::MB_COUNT) == 0 {
        return None;
    }
    let len = ni.axil_read(base + regs::MB_LEN) as usize;
    let src = Coords::from_bits(ni.axil_read(base + regs::MB_SRC)).expect("22 bits");
    let pdid = ni.axil_read(base + regs::MB_PDID) as u16;
    let mut data = Vec::with_capacity(len);
    for i in 0..len.div_ceil(4) {
        data.extend_from_slice(
            &ni.axil_read(base + regs::MB_DATA + 4 * i as u32)
                .to_le_bytes(),
        );
    }
    data.truncate(len);
    ni.axil_write(base + regs::MB_POP, 1);
    Some(MailboxEntry { src, pdid, data })
}

/// Read and pop the oldest error-queue entry (privileged).
pub fn pop_error(ni: &mut Ni) -> Option<ErrorWords> {
    if ni.axil_read_priv(regs::ERRQ_COUNT) == 0 {
        return None;
    }
    let w = [0u32, 1, 2, 3, 4].map(|k| ni.axil_read_priv(regs::ERRQ_W0 + 4 * k));
    ni.axil_write_priv(regs::ERRQ_POP, 1);
    Some(ErrorWords::from_words(w))
}

/// Counter `index` (`regs::cnt::*`) as its register reads (privileged).
pub fn counter(ni: &Ni, index: usize) -> u32 {
    ni.axil_read_priv(regs::CNT_BASE + 4 * index as u32)
}

/// Rejections for `r` as the register reads (privileged).
pub fn rejections(ni: &Ni, r: RejectReason) -> u32 {
    ni.axil_read_priv(regs::REJ_BASE + 4 * r.code() as u32)
}
