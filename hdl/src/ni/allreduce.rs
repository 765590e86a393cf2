//! `allreduce`: the allreduce engine in the NI (generated Verilog, part of
//! the `ni` top; only when `ni.ar_communicators > 0`, the config key that
//! turns it on).
//!
//! What is here: the engine's registers on the node page (AR_THRESHOLD,
//! AR_TIMEOUT, every communicator slot, with the golden write rules) and
//! the descriptor check, both in the `ar_check` child
//! ([`crate::allreduce::ar_check`]); the allreduce DOORBELL (DESC_CTRL op
//! = `OP_ALLREDUCE`; DESC_DEST holds communicator, op and dtype, fields
//! [`exanet_sim::ni::descriptor::AR_DEST_COMM`] / `AR_DEST_OP` /
//! `AR_DEST_DTYPE`; LADDR the source, RADDR the destination, LEN the
//! element count, DESC_CTRL the txid; the channel's PDID), refused
//! QUEUE_FULL when the queued descriptors and the completions waiting
//! for CQ room fill `ni.ar_queue_depth` (golden `Engine::post`), queued
//! while a collective runs (below, Descriptor queue), else checked at
//! once; the completion (kind ALLREDUCE, status OK or
//! FAILED with the `ArStatus` code as reason, peer = this node, the
//! channel's PDID), in the CQ at once when it has room, else queued here
//! and moved in by the next CQ_POP; AR_CNT (COMPLETIONS counts every
//! checked descriptor) and AR_REJ.
//!
//! **The data path of a box of one rank** (`templates/ni/ar_copy.v`, the
//! golden `Engine::do_step` of an empty plan): a descriptor checked OK on a
//! slot whose box holds one rank copies its source to its destination in
//! chunks of `max_payload_bytes`, each read whole over the AXI4 master (one
//! AR burst, two where it crosses a 4 KiB page; ARUSER = the descriptor's
//! PDID) into a chunk buffer (`cp_buf`, two banks of 32 × 128 bits of
//! LUTRAM, P/16 + 1 beats from word 1 of a bank), then written whole (one AW burst, two at a 4 KiB
//! page, AWUSER = the PDID, the beats realigned from the buffer by
//! `src mod 16 − dst mod 16` bytes, strobes exactly the chunk's bytes);
//! the next chunk's read overlaps the write as a collective step's do
//! (below, Combining: the next chunks' ARs at once, a chunk's beats into
//! the other bank, or once the write has sent that bank's last W beat;
//! with source and destination
//! overlapping other than exactly, only after the B responses, since a
//! chunk's source may be an earlier chunk's destination: the golden
//! order). After the last chunk's B, the OK completion is posted as a
//! failed check's is.
//!
//! Why the copy runs alone: the golden model does it at the DOORBELL, in
//! one step. So an allreduce DOORBELL is accepted only when the AXI4
//! master is quiet (`ar_quiet`: no transmit read issued or outstanding, no
//! receive write sent or awaiting its B). While one is pending (`ar_dbp`,
//! from AWVALID and the address alone) the scheduler picks nothing, so the
//! transmit side drains (`ar_txq`). The receive path goes on deciding
//! until it has: the transmit side drains only as the network returns
//! credits, and a receive path held on that wait would close a cycle
//! through the network (this NI's packets wait for credits that wait for
//! this NI to consume. The `ni` bench, whose router returns credits at
//! random whatever the NI does, saw it as a stretch: a packet undecided
//! for 2000 cycles while DOORBELLs waited, each for seven read-ahead
//! packets to leave at the credits' pace, RVALID high, RREADY low on a
//! full payload FIFO). Once the transmit side is quiet (it stays so: no pick) the
//! receive path stops deciding (`ar_rxh`), its writes drain through memory
//! alone, a bounded wait, and the DOORBELL is taken. Then the check and
//! the copy hold the AXI4-Lite slave, the receive decisions and the
//! scheduler's picks (`ar_hold`; the picks show `tx_busy`): a hold bounded
//! by memory latency and the vector's length, never by the network. Every
//! memory access and completion the bench sees is then in the golden
//! order (a packet decided while the DOORBELL waits comes before it, as
//! its AXI4-Lite write is not accepted yet).
//!
//! **A collective of two ranks or more** (`templates/ni/ar_send.v`, golden
//! `Engine::emit` and `Engine::advance`): a descriptor checked OK on a
//! slot whose box holds two ranks or more starts the slot's steps again in
//! the child's sequencer (`run`), one step at a time (`run_next`). Each
//! step's send range leaves as AllreduceFragment packets picked by
//! `rdma_tx`'s scheduler after the read-serve engine and before the
//! channels (golden `emit_request`), when TX_ENABLE: `min(P, left)` bytes
//! each, cut every P bytes of the range (not at P boundaries of the
//! landing address), the payload read over the AXI4 master like an RDMA
//! write's (ARUSER = the slot's PDID) from the source vector; header dest
//! = the partner's coordinates (the child's `st_dest`: origin + the rank's
//! digits, modulo the torus, this node's fpga and reserved bits), PDID =
//! the slot's, vaddr = the partner's layout offset of the step in bytes +
//! j·P; footer txid = the slot's sequence number, flags = the step index,
//! seq = j, first / last, user = communicator · op · dtype (the golden
//! `FRAG_USER_*` fields). FRAGS_SENT counts them. A step that receives
//! nothing is done after its last fragment and the next is prepared; a
//! step that receives waits for its receive (below, Combining). While a step is prepared (2 cycles or more per
//! step; the golden model moves on at once) the NI holds as during a check
//! (`ar_prep` in `ar_hold`), so nothing observes the difference.
//!
//! **Receiving** (`templates/ni/ar_recv.v`, golden `Engine::accept`): an
//! AllreduceFragment that passed the NI's checks (`rdma_rx`, with `1 <=
//! size <= P`) is checked in `FragReject` order against its slot (the
//! child's combinational look-up `fq_*` by the footer's communicator id)
//! and its step's receive record: Comm (slot not enabled), Pdid, Stale
//! (txid neither the slot's `s_seq` nor the next), Source (not in the box
//! modulo the torus, or another board's fpga / reserved bits), Step
//! (flags ≥ the golden step limit), Range (vaddr + size past half the
//! scratch area), Duplicate (index below the record's next, or the step
//! closed), Gap (above it), Mixed (a source other than the step's first
//! fragment's). A rejected one is counted in AR_REJ\[r\] and reported by
//! the NI with the golden `fragment_reason` (error entry, REJ, RX_ERROR),
//! nothing written. An accepted one advances its record (next index,
//! bytes, closed = last, the source's box offsets, the footer's op and
//! dtype bits), counts in FRAGS_RECEIVED, and is written by `rdma_rx`'s
//! write burst at scratch + (txid & 1) · size/2 + vaddr (two bursts at a
//! 4 KiB page), its B posting nothing; one of the running collective's
//! current sequence number is its progress (`rn_t` starts again).
//!
//! Records: one per slot, bank and step, `{next_index[15], bytes[32],
//! closed, offsets[12], op_dtype[8]}` = 68 bits at `{slot, bank, step}`
//! (2^(slot bits + 1 + step bits) entries: 128 at four slots on 8×4×4,
//! LUTRAM), zero until a valid bit (FFs) is set; a bank's valid bits
//! clear in one cycle when its collective ends (`seq_adv`, golden
//! `finish`) and a slot's when an AR_CTRL write is taken on it (golden
//! `set_communicator`), both after the cycle's decision (the golden
//! order: packet, AXI4-Lite write, time step). Storing the source's box
//! offsets rather than its coordinates gives the golden rank comparison
//! (a coordinate past the torus names the same rank).
//!
//! **Sequence numbers** (`s_seq` per slot in `ar_check`, golden
//! `Engine::finish`): zero at every AR_CTRL write taken, advanced when a
//! collective that passed the check completes (OK, TIMEOUT; a single
//! rank's copy included); the fragments' txid.
//!
//! **Timeout** (golden `Engine::advance`; the `ni` bench moves the golden
//! clock one cycle per cycle, after the cycle's other events): `rn_t`
//! counts the cycles since the collective's last progress (its DOORBELL,
//! each fragment picked, each fragment of its sequence number accepted:
//! the golden `last_progress` events; the golden
//! steps done at those same instants). With AR_TIMEOUT T > 0 (the value a
//! write sets this cycle, as the golden write comes before the time step),
//! the cycle where the count reaches T ends the collective TIMEOUT, its
//! completion in the CQ from the next cycle as the golden model's, `seq`
//! advanced, the slot free. That is cycle-exact; a timeout that falls
//! during the check or a step's preparation completes at the hold's end,
//! unobservable as the NI holds. AR_CTRL of the slot a collective runs on
//! is refused (golden `set_communicator`).
//!
//! **Combining** (`templates/ni/ar_copy.v` run by `ar_send.v`, golden
//! `Engine::step_ready` and `Engine::do_step`): a step is ready when all
//! its fragments are picked and its receive record (bank `seq & 1`) is
//! closed. The golden model does it at the event that made it ready (the
//! step's last fragment picked, or the closing fragment accepted); from
//! that event the NI holds (`cb_wait` in `ar_hold`; a timeout due meanwhile
//! waits for the step's writes, `cb_due`), so every later access sees the
//! state the golden step leaves. A record from another source than the
//! partner (its box digits, `st_partner`), of another byte count, op or
//! dtype ends the collective PROTOCOL. Else, once the AXI4 master is quiet
//! (its receive writes land meanwhile, `cb_drn`: the received bytes must be
//! in memory), the copy machine runs the step chunk by chunk
//! (`max_payload_bytes`): a storing step copies the receive range from
//! scratch to the destination; a combining step reads the received chunk
//! into `cp_buf` and the partial (source before this rank's first
//! combining step, destination after: `rn_indst`, which the later steps'
//! fragments read too) into `cb_buf`, streams both realigned to the
//! destination through the `reduce_alu` child `alu$0` (one 128-bit flit per
//! cycle, 6 cycles of latency, partial as `a`), collects the results in
//! `cb_res` and writes the chunk (one AW burst, two at a 4 KiB page), in
//! the golden chunk order. Then the next step is prepared (`run_next`), or
//! the collective completes OK. Buffers: three of two banks of 32 × 128
//! bits (LUTRAM), no vector-sized storage.
//!
//! *Schedule* (sessions 38 and 39; before session 38 a chunk was read,
//! then its partial read, combined, written, and its B awaited before the
//! next chunk's read: `3 (L + 1) + 4 b + A + 5` cycles per combining chunk
//! of `b` beats at memory latency `L`, ≈ 1.4 B/cycle). Three stages
//! overlap: the read half issues both ARs of a chunk back to back (one
//! AXI ID: the R beats come in AR order, the received bytes' then the
//! partial's; the memory agents take any number outstanding), the ALU
//! stage combines a chunk whose beats are in (its bank, offsets,
//! destination and length latched), and the write half writes the
//! previous chunk from `cb_res` meanwhile. Each buffer has two banks (P ≤
//! 256: 17 beats from word 1 of a bank; chunk j in bank j mod 2), and
//! four chunk records (`cr_*`: offsets, destination, length, beats; chunk
//! j in record j mod 4) let the read half issue a chunk's ARs as soon as
//! the previous chunk's are out, up to two chunks ahead of the banks: the
//! R channel streams while the current chunk's beats arrive, and a chunk's
//! beats are taken (RREADY) once the chunk two before has left its bank
//! (the ALU fed its flits, or for a copy or storing step the write sent
//! its last W beat). A chunk enters the ALU stage when that hands its
//! chunk to the write half (the same cycle) or is idle; its results go to
//! its bank of `cb_res`, which the write half has left (the chunk before
//! was handed on only with the write half idle). B responses are counted,
//! not awaited, between chunks: a later chunk of the step reads only bytes
//! no earlier chunk writes when each read range (received bytes, partial)
//! either is the write range exactly or does not meet it (`cp_safe`,
//! decided when the step starts; the partial in the destination is the
//! common case); otherwise the next chunk's ARs go out only once every
//! earlier chunk is written and its B in, as the golden order needs. The
//! step ends only after the last B (the next step, and its fragments, read
//! what it wrote). Per chunk, in steady state: `max(2 b, b + A + 1)`
//! cycles for a combining chunk (the read channel's beats: 16 for 128
//! bytes at `A` = 6, ≈ 8 B/cycle, for `L` up to what four records cover,
//! `L + 1 <= 5 b - 1`; session 38, one bank:
//! `(L + 1) + 2 b + 1`) and `b + 2` for a storing chunk (the write's AW
//! and W beats, for `L + 1 <= 2 b + 6`; session 38: `(L + 1) + b + 1`).
//! What is left: two read beats per combined flit (the AXI4 data width),
//! and the round trip once per step (its first chunk, and the last
//! chunk's write and B).
//!
//! **No cycle through the network** (the wait of a ready step): a step is
//! written only once the AXI4 master is quiet, and meanwhile the receive
//! path decides nothing (the golden model did the step at the event that
//! made it ready, so no later packet may be decided before it). The
//! receive writes drain through memory alone; the transmit reads of the
//! packets picked before the step would drain only as the network returns
//! credits, if their payload FIFO could fill (RREADY low), and those
//! credits may wait for this NI to consume a packet: a cycle. So while a
//! collective runs, `rdma_tx` picks a packet only when its payload FIFO
//! (two largest packets) has room for a largest packet besides every word
//! already owed to it (`pf_res`: words of the data packets loaded and not
//! yet taken by the sender): every read issued then lands in the FIFO
//! whatever the network does, and the wait is bounded by memory latency.
//! Why this design: it reuses the FIFO (no new storage: a reserved
//! fragment buffer would need another 2·P bytes and a second read path),
//! changes no decision order, so the golden model, whose picks are the
//! RTL's (`tx_busy`), needs no change, and costs only read-ahead during a
//! collective (two packets instead of `tx_ahead`; outside collectives the
//! NI reads ahead as before). Letting the receive path decide during the
//! wait would need every decision checked against the step's memory
//! ranges and completions reordered behind the golden step.
//!
//! **OK against TIMEOUT** on the last step: the golden model completes a
//! collective OK in the event that made its last step ready (the closing
//! fragment accepted, or a send-only step's last fragment picked), before
//! that cycle's time step, so a timeout falling while the RTL writes that
//! step or prepares the next one never beats it. The RTL holds a timeout
//! due from that event until its sequencer says whether a step follows
//! (`rn_undec`, and the send-only step's last pick in `cb_due`): none, the
//! collective ends OK (`rn_ok` no longer requires the timeout not due);
//! one, it ends TIMEOUT (the NI held meanwhile, so nobody sees it later).
//!
//! **Descriptor queue** (golden `Engine::post` and `Engine::progress`):
//! an allreduce DOORBELL taken while a collective runs is queued
//! (`aq`, `ni.ar_queue_depth` entries of {txid, PDID, op, dtype, count,
//! source, destination, communicator}, LUTRAM) unchecked. When the
//! running collective completes, the golden model starts the queue's
//! head at once: the RTL holds the NI (`aq_wt`), lets the receive writes
//! land and the transmit reads drain (both bounded, as above), then
//! checks it as a DOORBELL's (`aq_start`), then, if it completed at once
//! (a failed check, a single rank's copy), the next one. The timeout
//! count goes on from the golden start: a collective that ended TIMEOUT
//! ended in the cycle its timeout first fell (`rn_since` cycles before
//! the RTL ends it: the count reached T, or an AR_TIMEOUT write made T
//! smaller than the count); one that ended OK or PROTOCOL ended at its
//! last event, where the count began.
//!
//! Multi-node runs: the node-pair bench (`testbenches/src/blocks/node_pair`)
//! checks the engine on 4 RTL nodes in the suite and on 8 (2x2x2) and 6
//! (3x2x1, non-power-of-two) behind `--ignored`, every rank's result
//! byte for byte against the golden model. Known limits: one buffer bank
//! per buffer (the next chunk's beats wait for the ALU to free it) and
//! two memory reads per combined flit bound combining at about 3.9 B per
//! cycle at 128-byte chunks (BENCHMARKS.md, "Allreduce: overlapped
//! combining in the RTL engine").

//! Landing writes that post a completion and land during that wait (their
//! B taken: the step needs the received bytes in memory) have their CQ
//! entries held (`lh`, as deep as the landing queue, their CQ slots still
//! reserved) until the step and what follows it at once are done: the
//! golden model did the step at the event that made it ready and, for the
//! last step, posted the collective's completion then, before those
//! writes landed. When the collective's timeout falls during the wait,
//! the entries landed before it drain ahead of its TIMEOUT, the others
//! after, as the golden model posts them. Unobservable meanwhile: the NI
//! holds its AXI4-Lite slave and its receive decisions.
//!
//! Timing: the check takes 3 cycles or more (see `ar_check`); meanwhile
//! (`ar_hold`) the AXI4-Lite slave accepts nothing, the receive path
//! decides nothing and no landing B is taken, so that every later event
//! sees the state the golden model's atomic DOORBELL leaves.

use super::codes::Codes;
use super::geometry::{clog2, Geometry, Keys};
use super::records::Records;
use super::vgen::{block, pad, render, Bits, Queue, Word};
use crate::allreduce::ar_check::ArCheckParams;
use anyhow::{ensure, Result};
use askama::Template;
use exanet_sim::allreduce::engine::{
    ArStatus, FragReject, FRAG_REJECTS, FRAG_USER_COMM, FRAG_USER_DTYPE, FRAG_USER_OP,
};
use exanet_sim::ni::ni::fragment_reason;
use exanet_sim::ni::regs;
use exanet_sim::packet::coords::{self, Field, COORDS_BITS};
use exanet_sim::packet::{footer, header};

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
    /// Width of the descriptor queue's count (`aq_count`).
    aqcw: usize,
    /// The held landing completions' queue (as deep as the landing queue):
    /// storage, resets, updates, count bits.
    lh_storage: String,
    lh_reset: String,
    lh_update: String,
    lhw: usize,
    awd: String,
    aw_count_wide: String,
    /// The descriptor queue (golden `Engine::post`, `ni.ar_queue_depth`
    /// entries): storage, resets, updates, its count widened to compare,
    /// an entry's width.
    aq_storage: String,
    aq_reset: String,
    aq_update: String,
    aq_count_wide: String,
    aqw: usize,
    /// Padding of a 3-bit `ArStatus` to the completion's reason field.
    st_pad: String,
    /// `ArStatus::Ok` as the child's 3-bit status.
    st_ok: String,
    /// The data path of a single rank (`templates/ni/ar_copy.v`).
    copy: String,
    /// The collective's steps, fragments and timeout (`templates/ni/ar_send.v`).
    send: String,
    /// `ArStatus::Timeout` as the child's 3-bit status.
    st_timeout: String,
    /// The fragments received (`templates/ni/ar_recv.v`).
    recv: String,
    /// `ArStatus::Protocol` as the child's 3-bit status.
    st_protocol: String,
}

/// The `FragReject` codes the receive checks give, as 4-bit literals.
struct FragCodes {
    comm: String,
    pdid: String,
    stale: String,
    source: String,
    step: String,
    range: String,
    duplicate: String,
    gap: String,
    mixed: String,
}

/// `templates/ni/ar_recv.v`.
#[derive(Template)]
#[template(path = "ni/ar_recv.v")]
struct ArRecv {
    /// Index bits of a record: slot, bank, step; records (2^iw) and
    /// their width.
    sb: usize,
    tb: usize,
    iw: usize,
    rn: usize,
    rw: usize,
    /// Rejection codes, and each one's NI reason (golden `fragment_reason`).
    fr: FragCodes,
    ni_map: Vec<(String, String)>,
    nrej: usize,
    /// The step limit (golden `EngineParams::step_limit`), 8-bit.
    limit: String,
    /// The torus dimensions, 6-bit.
    d: [String; 3],
    /// Coordinate fields' bit ranges: x, y, z, fpga, reserved.
    cx: String,
    cy: String,
    cz: String,
    cf: String,
    cr: String,
    /// The footer's user field width.
    userw: usize,
    /// Bits of the index signals above the slot bits, unused.
    unused_hi: String,
    /// Padding of `{dtype, op}` to the record's user bits above the
    /// communicator id.
    opdt_pad: String,
}

/// `templates/ni/ar_send.v`.
#[derive(Template)]
#[template(path = "ni/ar_send.v")]
struct ArSend {
    /// `ArStatus::Ok` as the child's 3-bit status.
    st_ok: String,
    /// The fragment payload: `max_payload_bytes`.
    p: usize,
    /// Widths of the footer's seq, flags, txid, user, of the coordinates
    /// and of the header's PDID.
    seqw: usize,
    flagsw: usize,
    txidw: usize,
    userw: usize,
    coordsw: usize,
    pdidw: usize,
    /// The fragments' footer user field from the checked descriptor's
    /// communicator, op and dtype (golden `FRAG_USER_*`).
    user_word: String,
}

/// `templates/ni/ar_copy.v`.
#[derive(Template)]
#[template(path = "ni/ar_copy.v")]
struct ArCopy {
    /// The chunk: `max_payload_bytes`.
    p: usize,
    /// `ArStatus::Ok` as the child's 3-bit status.
    st_ok: String,
}

/// Bits of `ar_check`'s status output.
const STATUS_BITS: usize = 3;

/// Bits of a queued descriptor besides its txid and PDID: op 3, dtype 3,
/// count 32, source 42, destination 42, communicator 4 (`ar_check`'s
/// `d_*` inputs).
const AQ_BITS: usize = 3 + 3 + 32 + 42 + 42 + 4;

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
    // Completions waiting for CQ room: a DOORBELL is accepted while the
    // queued descriptors and these are fewer than ar_queue_depth (golden
    // `Engine::post`), and the running collective's completion comes on
    // top: up to ar_queue_depth + 1 wait (a collective ending on a full
    // CQ, then the descriptor queued behind it failing its check at once).
    let awa = clog2(n.ar_queue_depth + 1);
    let aw = Queue {
        name: "aw",
        width: r.cq.width(),
        abits: awa,
        depth: n.ar_queue_depth + 1,
    };
    // ar_queue_depth is at most 64: compare on 8 bits.
    let aww = awa + 1;
    let aqa = clog2(n.ar_queue_depth);
    let aq = Queue {
        name: "aq",
        width: AQ_BITS + r.cq.at("txid").width + r.cq.at("pdid").width,
        abits: aqa,
        depth: n.ar_queue_depth,
    };
    let lh = Queue {
        name: "lh",
        width: r.cq.width(),
        abits: super::rdma_rx::LQA,
        depth: 1 << super::rdma_rx::LQA,
    };
    let st_ok = format!("{STATUS_BITS}'d{}", ArStatus::Ok as u8);
    ensure!(
        (16..=256).contains(&n.max_payload_bytes) && n.max_payload_bytes.is_multiple_of(16),
        "NI RTL: ni.max_payload_bytes = {}: the allreduce copy takes 16..=256, a multiple of 16 (its chunk buffer holds P / 16 + 3 words of 32)",
        n.max_payload_bytes
    );
    let copy = render(
        &ArCopy {
            p: n.max_payload_bytes,
            st_ok: st_ok.clone(),
        },
        "ar_copy",
    )?;
    let fw = |f: Field| f.width as usize;
    let ub = |f: Field, name| Bits::new(f.offset as usize, f.width as usize, name, false);
    let userw = fw(footer::USER);
    let send = render(
        &ArSend {
            st_ok: st_ok.clone(),
            p: n.max_payload_bytes,
            seqw: fw(footer::SEQ),
            flagsw: fw(footer::FLAGS),
            txidw: fw(footer::TXID),
            userw,
            coordsw: COORDS_BITS as usize,
            pdidw: fw(header::PDID),
            user_word: Word::new(userw)
                .put(ub(FRAG_USER_COMM, "comm"), "ar$0$run_comm", 4)
                .put(ub(FRAG_USER_OP, "op"), "ar$0$run_op", 3)
                .put(ub(FRAG_USER_DTYPE, "dtype"), "ar$0$run_dtype", 3)
                .part(userw, 0),
        },
        "ar_send",
    )?;
    let recv = recv_verilog(g)?;
    render(
        &Allreduce {
            k: g.keys(),
            c,
            r,
            aw_storage: block(aw.decl_mem() + &aw.decl_ptrs()),
            aw_reset: block(aw.reset()),
            aw_update: block(aw.update()),
            aww,
            lh_storage: block(lh.decl_mem() + &lh.decl_ptrs()),
            lh_reset: block(lh.reset()),
            lh_update: block(lh.update()),
            lhw: super::rdma_rx::LQA + 1,
            awd: format!("8'd{}", n.ar_queue_depth),
            aw_count_wide: format!("{{{}aw_count}}", pad(8 - aww)),
            aq_storage: block(aq.decl_mem() + &aq.decl_ptrs()),
            aq_reset: block(aq.reset()),
            aq_update: block(aq.update()),
            aq_count_wide: format!("{{{}aq_count}}", pad(8 - (aqa + 1))),
            aqcw: aqa + 1,
            aqw: aq.width,
            st_pad: pad(r.cq.at("reason").width - STATUS_BITS),
            st_ok,
            copy,
            send,
            st_timeout: format!("{STATUS_BITS}'d{}", ArStatus::Timeout as u8),
            recv,
            st_protocol: format!("{STATUS_BITS}'d{}", ArStatus::Protocol as u8),
        },
        "allreduce",
    )
}

/// Bits of a receive record (`ar_recv.v`): next index 15, bytes 32,
/// closed 1, the source's box offsets 12, the footer user field above the
/// communicator id.
fn record_bits() -> usize {
    15 + 32 + 1 + 12 + (footer::USER.width - FRAG_USER_COMM.width) as usize
}

/// `templates/ni/ar_recv.v` of the NI `g`.
fn recv_verilog(g: &Geometry) -> Result<String> {
    let n = &g.p.ni;
    let ep = n.engine().ok_or_else(|| {
        anyhow::anyhow!("NI RTL: the receive records need ni.ar_communicators > 0")
    })?;
    let limit = ep.step_limit();
    ensure!(
        limit < 256 && FRAG_USER_COMM.offset == 0 && FRAG_USER_COMM.width == 4,
        "NI RTL: the receive check takes a step limit below 256 ({limit}) and the communicator id in user[3:0]"
    );
    ensure!(
        record_bits() == 68 && footer::USER.width == 12,
        "NI RTL: ar_recv.v's record layout assumes a 12-bit footer user field"
    );
    // The step's check compares the record's user bits above the
    // communicator id with {pad, dtype, op}.
    ensure!(
        FRAG_USER_OP.offset == FRAG_USER_COMM.width
            && FRAG_USER_DTYPE.offset == FRAG_USER_OP.offset + FRAG_USER_OP.width
            && FRAG_USER_OP.width == 3
            && FRAG_USER_DTYPE.width == 3,
        "NI RTL: ar_recv.v's step check takes the op right above the communicator id and the dtype above it, 3 bits each"
    );
    let opdt_hi = footer::USER.width - FRAG_USER_DTYPE.offset - FRAG_USER_DTYPE.width;
    let sb = clog2(n.ar_communicators).max(1);
    let tb = clog2(limit).max(1);
    let iw = sb + 1 + tb;
    let l4 = |r: FragReject| format!("4'd{}", r as u8);
    let all = [
        FragReject::Comm,
        FragReject::Pdid,
        FragReject::Stale,
        FragReject::Source,
        FragReject::Step,
        FragReject::Range,
        FragReject::Duplicate,
        FragReject::Gap,
        FragReject::Mixed,
    ];
    let rng = |f: Field| format!("[{}:{}]", f.offset + f.width - 1, f.offset);
    let hi = |w: usize| {
        if sb < w {
            format!("[{}:{sb}]", w - 1)
        } else {
            String::new()
        }
    };
    let unused_hi: String = ["af_c", "ar$0$clr_slot", "ar$0$run_comm"]
        .iter()
        .filter(|_| sb < 4)
        .map(|s| format!(", {s}{}", hi(4)))
        .collect();
    render(
        &ArRecv {
            sb,
            tb,
            iw,
            rn: 1 << iw,
            rw: record_bits(),
            fr: FragCodes {
                comm: l4(FragReject::Comm),
                pdid: l4(FragReject::Pdid),
                stale: l4(FragReject::Stale),
                source: l4(FragReject::Source),
                step: l4(FragReject::Step),
                range: l4(FragReject::Range),
                duplicate: l4(FragReject::Duplicate),
                gap: l4(FragReject::Gap),
                mixed: l4(FragReject::Mixed),
            },
            ni_map: all
                .iter()
                .map(|&r| (l4(r), format!("4'd{}", fragment_reason(r).code())))
                .collect(),
            nrej: FRAG_REJECTS,
            limit: format!("8'd{limit}"),
            d: n.torus_dims.map(|d| format!("6'd{d}")),
            cx: rng(coords::X),
            cy: rng(coords::Y),
            cz: rng(coords::Z),
            cf: rng(coords::FPGA),
            cr: rng(coords::RESERVED),
            userw: footer::USER.width as usize,
            unused_hi,
            opdt_pad: pad(opdt_hi as usize),
        },
        "ar_recv",
    )
}

/// The `ar_check` child's parameters of the NI `g` (with an engine).
pub fn check_params(g: &Geometry) -> ArCheckParams {
    ArCheckParams::of(&g.p.ni)
}
