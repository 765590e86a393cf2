//! `allreduce`: the allreduce engine's first stage in the NI (generated
//! Verilog, part of the `ni` top; only when `ni.ar_communicators > 0`,
//! through [`super::Geometry::with_engine_check`]).
//!
//! What is here: the engine's registers on the node page (AR_THRESHOLD,
//! AR_TIMEOUT, every communicator slot, with the golden write rules) and
//! the descriptor check, both in the `ar_check` child
//! ([`crate::allreduce::ar_check`]); the allreduce DOORBELL (DESC_CTRL op
//! = `OP_ALLREDUCE`; DESC_DEST holds communicator, op and dtype, fields
//! [`exanet_sim::ni::descriptor::AR_DEST_COMM`] / `AR_DEST_OP` /
//! `AR_DEST_DTYPE`; LADDR the source, RADDR the destination, LEN the
//! element count, DESC_CTRL the txid; the channel's PDID), refused
//! QUEUE_FULL when the completions waiting for CQ room fill
//! `ni.ar_queue_depth`; the completion (kind ALLREDUCE, status OK or
//! FAILED with the `ArStatus` code as reason, peer = this node, the
//! channel's PDID), in the CQ at once when it has room, else queued here
//! and moved in by the next CQ_POP; AR_CNT (COMPLETIONS counts every
//! checked descriptor) and AR_REJ.
//!
//! Not here yet (later slices of issue 15): the collective itself. A
//! descriptor that passes the check completes OK at once and writes
//! nothing; the golden engine would run it. That is why
//! `ni.ar_communicators > 0` is refused by [`super::Geometry::new`] (and so
//! by `exanet generate`), and why the `ni` bench keeps accepted
//! descriptors out of its stimulus. No fragment is sent or received:
//! FRAGS_SENT, FRAGS_RECEIVED and AR_REJ read 0, and a received
//! AllreduceFragment is rejected UNSUPPORTED as without an engine (the
//! golden engine would check it).
//!
//! Timing: the check takes 3 cycles or more (see `ar_check`); meanwhile
//! (`ar_hold`) the AXI4-Lite slave accepts nothing, the receive path
//! decides nothing and no landing B is taken, so that every later event
//! sees the state the golden model's atomic DOORBELL leaves.

use super::codes::Codes;
use super::geometry::{clog2, Geometry, Keys};
use super::records::Records;
use super::vgen::{block, pad, render, Queue};
use crate::allreduce::ar_check::ArCheckParams;
use anyhow::{ensure, Result};
use askama::Template;
use exanet_sim::allreduce::engine::ArStatus;
use exanet_sim::ni::regs;

/// `templates/ni/allreduce.v`.
#[derive(Template)]
#[template(path = "ni/allreduce.v")]
struct Allreduce<'a> {
    #[allow(dead_code)]
    k: Keys,
    c: &'a Codes,
    r: &'a Records,
    /// The waiting completions' queue: storage, resets, updates.
    aw_storage: String,
    aw_reset: String,
    aw_update: String,
    /// Its count bits, its depth, and the count widened to compare.
    aww: usize,
    awd: String,
    aw_count_wide: String,
    /// Padding of a 3-bit `ArStatus` to the completion's reason field.
    st_pad: String,
    /// `ArStatus::Ok` as the child's 3-bit status.
    st_ok: String,
}

/// Bits of `ar_check`'s status output.
const STATUS_BITS: usize = 3;

/// The Verilog of the engine's first stage (empty without an engine).
pub fn verilog(g: &Geometry, c: &Codes, r: &Records) -> Result<String> {
    if !g.ar {
        return Ok(String::new());
    }
    let n = &g.p.ni;
    ensure!(
        regs::AR_CNT_BASE.is_multiple_of(16) && regs::AR_CNT_COUNT <= 4,
        "NI RTL: AR_CNT_BASE = {:#x}, AR_CNT_COUNT = {}: the decode takes the counter index from offset bits [3:2]",
        regs::AR_CNT_BASE,
        regs::AR_CNT_COUNT
    );
    let awa = clog2(n.ar_queue_depth);
    let aw = Queue {
        name: "aw",
        width: r.cq.width(),
        abits: awa,
        depth: n.ar_queue_depth,
    };
    // ar_queue_depth is at most 64: compare on 8 bits.
    let aww = awa + 1;
    render(
        &Allreduce {
            k: g.keys(),
            c,
            r,
            aw_storage: block(aw.decl_mem() + &aw.decl_ptrs()),
            aw_reset: block(aw.reset()),
            aw_update: block(aw.update()),
            aww,
            awd: format!("8'd{}", n.ar_queue_depth),
            aw_count_wide: format!("{{{}aw_count}}", pad(8 - aww)),
            st_pad: pad(r.cq.at("reason").width - STATUS_BITS),
            st_ok: format!("{STATUS_BITS}'d{}", ArStatus::Ok as u8),
        },
        "allreduce",
    )
}

/// The `ar_check` child's parameters of the NI `g` (with an engine).
pub fn check_params(g: &Geometry) -> ArCheckParams {
    ArCheckParams::of(&g.p.ni)
}
