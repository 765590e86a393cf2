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

use super::top::{Geometry, Keys};
use super::vgen::{pad, render};
use anyhow::Result;
use askama::Template;
use exanet_sim::ni::regs;

/// `templates/ni/axil_regs.v`.
#[derive(Template)]
#[template(path = "ni/axil_regs.v")]
struct AxilRegs {
    k: Keys,
    /// Window storage (2^wa).
    nw: usize,
    /// Last index of the window registers.
    nwm1: usize,
    /// Last index of the descriptor storage (2^cw · 2^dqa).
    dqn: usize,
    /// `2^addr_bits` in hex: the local-address limit.
    llim: String,
    /// The first offset past the CH_PDID registers (3 hex digits).
    pdend: String,
    /// The first offset past the PKT_DATA / MB_DATA words (3 hex digits).
    pkend: String,
    /// `cw + 1`: the top bit of a CH_PDID word index.
    cwp1: usize,
    /// `mwa + 1`: the top bit of a PKT_DATA word index.
    mwap1: usize,
    /// ID and PARAMS0..4 (8 hex digits).
    id: String,
    par0: String,
    par1: String,
    par2: String,
    par3: String,
    par4: String,
    /// Zero padding of CH_STATUS fields and queue counts.
    spad: String,
    dqpad: String,
    eqpad: String,
    cqpad: String,
    mbpad: String,
    /// Count widths of the error, mailbox and completion queues.
    eqw: usize,
    mbw: usize,
    cqw: usize,
}

/// The Verilog of the register file.
pub fn verilog(g: &Geometry) -> Result<String> {
    let n = &g.p.ni;
    let nc = 1usize << g.cw;
    let nw = 1usize << g.wa;
    let par0 = n.channels
        | n.windows << 8
        | (n.max_payload_bytes / 16) << 16
        | (n.mailbox_msg_bytes / 16) << 24;
    let par1 = n.mailbox_depth | n.cq_depth << 16;
    let par2 = n.desc_queue_depth | n.errq_depth << 16;
    let par3 =
        n.pkt_slots | n.resp_queue_depth << 8 | n.read_queue_depth << 16 | n.poison_depth << 24;
    render(
        &AxilRegs {
            k: g.keys(),
            nw,
            nwm1: nw - 1,
            dqn: (nc << g.dqa) - 1,
            llim: format!("{:x}", 1u64 << n.addr_bits),
            pdend: format!("{:03X}", regs::CH_PDID_BASE as usize + 4 * n.channels),
            pkend: format!("{:03X}", regs::PKT_DATA as usize + 4 * g.mw),
            cwp1: g.cw + 1,
            mwap1: g.mwa + 1,
            id: format!("{:08X}", regs::ID_VALUE),
            par0: format!("{par0:08X}"),
            par1: format!("{par1:08X}"),
            par2: format!("{par2:08X}"),
            par3: format!("{par3:08X}"),
            par4: format!("{:08X}", n.addr_bits),
            spad: pad(8 - (g.sa + 1)),
            dqpad: pad(16 - (g.dqa + 1)),
            eqpad: pad(32 - (g.eqa + 1)),
            cqpad: pad(32 - (g.cqa + 1)),
            mbpad: pad(32 - (g.mba + 1)),
            eqw: g.eqa + 1,
            mbw: g.mba + 1,
            cqw: g.cqa + 1,
        },
        "axil_regs",
    )
}
