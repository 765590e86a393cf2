//! `axil_regs`: the AXI4-Lite slave, the register file and the per-channel
//! descriptor queues (generated Verilog, part of the `ni` top).
//!
//! One transaction at a time (see the `ni` module doc for the timing
//! contract). Writes: the decode block computes the response and the one
//! action of the write; the register block applies it at the end of the
//! accepting cycle. DOORBELL checks, in the golden order: queue full (1),
//! op (4), length 0 (2), `local + len > 2^addr_bits` or `remote + len >
//! 2^42` (3); a refused doorbell or PKT_SEND latches CH_ERR and answers
//! SLVERR. A descriptor (170 bits: PDID captured at the doorbell, txid,
//! notify, op, dest, len, remote, local) is pushed into the channel's
//! queue (LUTRAM, `2^dqa` slots, `desc_queue_depth` usable); the
//! scheduler pops it when it picks the descriptor's last packet.
//!
//! Reads return the state at the start of the accepting cycle. The
//! receive side's registers are decoded here (their state lives in
//! [`super::rdma_rx`]): STATUS (W1C sticky bits, live bits), the counters,
//! REJ\[1..=11\], the error queue, the completion-queue page (0x1000) and
//! the mailbox page (0x2000). No write is accepted in a cycle in which the
//! receive path decides a packet.

use super::codes::Codes;
use super::geometry::{Geometry, Keys};
use super::records::Records;
use super::vgen::{pad, render, Bits, Word};
use anyhow::Result;
use askama::Template;
use exanet_sim::ni::regs;

/// `templates/ni/axil_regs.v`.
#[derive(Template)]
#[template(path = "ni/axil_regs.v")]
struct AxilRegs<'a> {
    k: Keys,
    c: &'a Codes,
    r: &'a Records,
    /// Window storage (2^wa).
    nw: usize,
    /// Last index of the window registers.
    nwm1: usize,
    /// Last index of the descriptor storage (2^cw · 2^dqa).
    dqn: usize,
    /// `2^addr_bits` in hex: the local-address limit.
    llim: String,
    /// `cw + 1`: the top bit of a CH_PDID word index.
    cwp1: usize,
    /// `mwa + 1`: the top bit of a PKT_DATA word index.
    mwap1: usize,
    /// Zero padding of the queue counts to 32 bits.
    eqpad: String,
    cqpad: String,
    mbpad: String,
    /// STATUS: the live bits (and the zeros above), the sticky bits
    /// (and the zeros up to the live bits).
    status_live: String,
    status_sticky: String,
    /// CH_STATUS: the flag bits (and the zeros above), the free counts.
    ch_status_flags: String,
    ch_status_free: String,
    /// WIN_CTRL of window `r_win`.
    win_ctrl: String,
}

/// The Verilog of the register file.
pub fn verilog(g: &Geometry, c: &Codes, r: &Records) -> Result<String> {
    let n = &g.p.ni;
    let nc = 1usize << g.cw;
    let nw = 1usize << g.wa;
    let bit = |mask: u32| Bits::new(mask.trailing_zeros() as usize, 1, "status", false);
    let nonempty = |q: &str, abits: usize| format!("{q}_count != {}'d0", abits + 1);
    let status = Word::new(32)
        .put(bit(regs::ST_ERRQ_NONEMPTY), nonempty("eq", g.eqa), 1)
        .put(bit(regs::ST_MB_NONEMPTY), nonempty("mb", g.mba), 1)
        .put(bit(regs::ST_CQ_NONEMPTY), nonempty("cq", g.cqa), 1)
        .put(c.bits.st_axi_error, "st_axierr", 1)
        .put(c.bits.st_hdr_corrected, "st_hdrc", 1)
        .put(c.bits.st_track_lost, "trk_lost", 1)
        .put(c.bits.st_errq_overflow, "st_eqovf", 1)
        .put(c.bits.st_rx_error, "st_rxerr", 1);
    let live = [
        regs::ST_CQ_NONEMPTY,
        regs::ST_MB_NONEMPTY,
        regs::ST_ERRQ_NONEMPTY,
    ]
    .map(|m| m.trailing_zeros() as usize);
    let live_lsb = *live.iter().min().unwrap();
    let f = |f: exanet_sim::packet::coords::Field| {
        Bits::new(f.offset as usize, f.width as usize, f.name, false)
    };
    let ch_status = Word::new(32)
        .put(
            f(regs::CH_STATUS_PKT_PENDING),
            format!("pk_free[r_ch] != {}'d{}", g.sa + 1, g.s),
            1,
        )
        .put(
            f(regs::CH_STATUS_RDMA_BUSY),
            format!("dq_count[r_ch] != {}'d0", g.dqa + 1),
            1,
        )
        .put(f(regs::CH_STATUS_PKT_FREE), "pk_free[r_ch]", g.sa + 1)
        .put(
            f(regs::CH_STATUS_DESC_FREE),
            format!("({}'d{} - dq_count[r_ch])", g.dqa + 1, n.desc_queue_depth),
            g.dqa + 1,
        );
    let flags_lsb = [regs::CH_STATUS_PKT_PENDING, regs::CH_STATUS_RDMA_BUSY]
        .iter()
        .map(|f| f.offset as usize)
        .min()
        .unwrap();
    let win = format!("[r_win[{}:0]]", g.wa - 1);
    let win_ctrl = Word::new(32)
        .put(f(regs::WIN_CTRL_ENABLE), format!("win_en{win}"), 1)
        .put(
            f(regs::WIN_CTRL_PDID),
            format!("win_pdid{win}"),
            regs::WIN_CTRL_PDID.width as usize,
        );
    render(
        &AxilRegs {
            k: g.keys(),
            c,
            r,
            nw,
            nwm1: nw - 1,
            dqn: (nc << g.dqa) - 1,
            llim: format!("{:x}", 1u64 << n.addr_bits),
            cwp1: g.cw + 1,
            mwap1: g.mwa + 1,
            eqpad: pad(32 - (g.eqa + 1)),
            cqpad: pad(32 - (g.cqa + 1)),
            mbpad: pad(32 - (g.mba + 1)),
            status_live: status.part(32, live_lsb),
            status_sticky: status.part(live_lsb, 0),
            ch_status_flags: ch_status.part(32, flags_lsb),
            ch_status_free: ch_status.part(flags_lsb, 0),
            win_ctrl: win_ctrl.text(),
        },
        "axil_regs",
    )
}
