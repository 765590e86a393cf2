//! `rdma_rx`: the receive path (generated Verilog, part of the `ni` top).
//!
//! Two decoupled sides around a ring buffer per message class (class 0
//! `rx_buf`, `2^rxa` = [`super::rx_buffer_flits`] words, at least two
//! largest packets; class 1 `r1_buf`, [`super::rx_class1_flits`] words,
//! one largest packet):
//! - **Receive side**: every flit goes into the ring of its VC's class
//!   (`in_vc / vcs_per_class`) at `in_wp` / `in_wp1` (with its VC in
//!   `rx_vcm` / `r1_vcm`); a packet is the words after the previous tail
//!   (the head flag is redundant; packets never interleave). Its payload CRC-32 is computed as the flits
//!   arrive (second `Crc32`, `crc_rx`, inputs registered; the byte count
//!   of the last payload word from the SECDED-corrected size of
//!   `header_rx`, a second header decoder on the registered first word).
//!   At the tail a record `{words, CRC}` enters its class's packet queue
//!   (`pm`, `pn`).
//! - **Decision side**, one packet at a time, in arrival order within a
//!   class, class 1 first: LOAD (the next record: header, footer and first
//!   payload word into registers; `rx_cls` its class)
//!   → DECIDE (`rx_commit`, or `rx_busy` and wait) → for an accepted data
//!   packet AW → W (one beat per cycle when WREADY) → the next LOAD in the
//!   cycle of the last W beat (or of a decision that writes nothing), so a
//!   256-byte packet takes 18 cycles, as many as its flits. The write's B
//!   is not waited for (below). A mailbox message the mailbox has room
//!   for goes DECIDE → COPY (its payload words into the mailbox tail slot,
//!   one per cycle) → DECIDE first: the tail slot stays free until the
//!   commit (only pops happen meanwhile). A class-0 packet found Busy
//!   while a class-1 packet waits *yields*: it is parked (`c0_park`, its
//!   record in `pk_n` / `pk_crc`, its words kept at `dq_sp`), the class-1
//!   packets are decided, then it is loaded again from its words. So a
//!   response is never stuck behind a request waiting for room in the
//!   response queue (`ni` module doc, "Message classes").
//! - **Credits**: a packet's words are free once decided (or once its
//!   last W beat is taken); each ring's free pointer (`fr_p`, `fr_p1`)
//!   then walks to its done pointer (`dn_p`, `dn_p1`), one credit per
//!   cycle (class 1 first) on each word's VC, so credits return in arrival
//!   order within a class.
//!
//! DECIDE applies the golden checks in order ([`exanet_sim::ni::rdma_rx`]):
//! word count < 2 (FORMAT, nothing trusted), header SECDED / type
//! (`header_unpack`), footer CRC-8 (`footer_unpack`), word count, destination,
//! message class (the type's against the arrival VC's, WRONG_CLASS = 11),
//! payload CRC-32, type rules, protection (windows with the header PDID,
//! range below `2^addr_bits`; a data packet's `[vaddr, vaddr + size)`, a
//! read request's `[vaddr, vaddr + len)`), mailbox PDID, and for MailboxAck /
//! MailboxNack the message slot (`txid = c·pkt_slots + slot` awaiting an
//! acknowledgement from `src` with that PDID and not being sent, else
//! `Stale`). "Being sent" (`ms_v`, `ms_idx`): from the message's send-queue
//! pop ([`super::rdma_tx`] LOAD) until its tail flit is on `out_*`; such an
//! ack can only be forged (no receiver answers a packet before its tail),
//! and acting on it would free or re-queue a slot still being read out. The decision
//! uses the register state at the start of the cycle; its effects are
//! committed at its end. No decision while the scheduler picks or loads.
//!
//! Then the resources: a completion entry (data `last = 1`, RdmaCompletion,
//! Nack), a response entry (data `last = 1` with notify, every Mailbox
//! message, a rejected Mailbox / RdmaReadReq with trusted header and
//! footer, not MISROUTED nor WRONG_CLASS; an accepted RdmaReadReq finding
//! the read queue full: Nack READ_BUSY = 12, RD_BUSY_NACKS); when one is
//! full the packet waits (`rx_busy`), as the golden model's `Busy`. The
//! response queue's room counts the response lane's pop of the same cycle
//! (the golden model emits first).
//!
//! **Completion after landing.** Every accepted data packet's write is
//! recorded in the landing queue `lq` (up to `2^LQA` writes in flight,
//! one AXI ID, B in order) with the completion (`last = 1`) and
//! RdmaCompletion response (notify) it will post, both decided at DECIDE
//! (status from the damaged-transfer table then). They enter the
//! completion / response queues (tail pointer and count, so CQ_COUNT,
//! CQ_W*, STATUS.CQ_NONEMPTY and the scheduler see them) only in the cycle
//! the write's B handshake is taken (`m_bvalid && m_bready`): software
//! never sees a completion, nor the source a notify, before the last byte
//! is in memory. The room check at DECIDE counts the entries held in the
//! landing queue (`lq_cqh`, `lq_rqh`), as the golden model does; no
//! decision is made in a cycle a landing write posts (one push per queue
//! and cycle), nor for a data packet while the landing queue is full.
//!
//! **Allreduce fragments** (with the engine, `ni.ar_communicators > 0`):
//! after the type rule `1 <= size <= P` (else FORMAT) the engine's checks
//! decide (`templates/ni/ar_recv.v`, see [`super::allreduce`]); a rejected
//! fragment is reported with the golden `fragment_reason` and touches no
//! transfer tracking (its txid is a collective's number), an accepted one
//! is written to its scratch place by the same write burst as a data
//! packet's payload, split in two bursts where it crosses a 4 KiB page
//! (a fragment's place is not aligned to P), each B posting nothing.
//!
//! Effects: the reject path (RX_PACKETS, RX_REJECTED, REJ\[r\],
//! HDR_CORRECTED, sticky RX_ERROR / HDR_CORRECTED, an error-queue entry of
//! the trusted fields or sticky ERRQ_OVERFLOW, nothing written); accepted
//! data packets: one AXI4 write burst of the payload (strobed, AWUSER =
//! PDID; RX_DATA_BYTES) and with `last = 1` a completion (WRITE_IN /
//! READ_DONE) whose status comes from the damaged-transfer table, plus an
//! RdmaCompletion response when notify, both posted at B (above);
//! RdmaCompletion → NOTIFY entry;
//! Nack → READ_DONE / REMOTE_DENIED entry; RdmaReadReq → a read job
//! `{notify, txid, PDID, requester, len, landing, source}` in the read
//! queue (`read_queue_depth` entries, popped by [`super::rdma_tx`] when it
//! loads the job's last packet); Mailbox → queued and MailboxAck,
//! or MailboxNack(0) and MB_FULL_NACKS when full; MailboxAck / MailboxNack
//! → the packetizer slot freed, or queued again (nack 0 or PAYLOAD_CRC,
//! MB_RETRIES), or freed with MB_DENIED and CH_ERR = MSG_DENIED.
//!
//! Damaged-transfer table: `poison_depth` (src, txid) keys with valid bits,
//! matched in parallel; a rejected packet with a trusted footer and
//! `last = 0` marks its key (lowest free entry; TRACK_LOST when full), one
//! with an untrusted footer sets TRACK_LOST, one with `last = 1` and a
//! trusted data-type header clears its key; an accepted data packet clears
//! its key when `first` or `last`.
//!
//! Input contract: the sender starts a packet only when it holds credits
//! for a largest packet ([`super::rx_packet_flits`] `= 2 + P/16`, virtual
//! cut-through) of that class's pool, so no ring overflows. Latency: tail flit in cycle
//! t, decision at t + 2 when the decision side is idle, AW from the next
//! cycle, then one W beat per cycle when WREADY; a data packet's
//! completion is readable from the cycle after its B handshake (figures in
//! BENCHMARKS.md, "Network interface").

use super::codes::{Codes, CQ_CODE_BITS, REASON_BITS};
use super::geometry::{Geometry, Keys};
use super::records::Records;
use super::vgen::{block, pad, render, Bits, Queue, Word};
use anyhow::{ensure, Result};
use askama::Template;
use exanet_sim::ni::completion as cqw;
use exanet_sim::ni::errors as eqw;
use exanet_sim::packet::coords::Field;
use exanet_sim::packet::footer::FLAGS;

/// Index bits of the landing queue: up to `2^LQA` accepted data packets'
/// writes in flight (decided, B not yet taken).
pub(super) const LQA: usize = 3;

/// `name` (`width` bits) as a `bits`-bit expression: zero-extended or
/// truncated (the value always fits).
fn fit(name: &str, width: usize, bits: usize) -> String {
    if bits > width {
        format!("{{{}'d0, {name}}}", bits - width)
    } else {
        format!("{name}[{}:0]", bits - 1)
    }
}

/// `templates/ni/rdma_rx.v`.
#[derive(Template)]
#[template(path = "ni/rdma_rx.v")]
struct RdmaRx<'a> {
    k: Keys,
    c: &'a Codes,
    r: &'a Records,
    /// REJ counters (one per 4-bit reason code).
    rejn: usize,
    /// CQ_W0..W2 and ERRQ_W0..W4 of the queue heads (`cq_rd`, `eq_rd`).
    cq_w: Vec<String>,
    eq_w: Vec<String>,
    /// Class-0 ring: last index, index bits, and `+ 1`, `- 1`, `+ 32`.
    rxnm1: usize,
    rxa: usize,
    rxa1: usize,
    rxam1: usize,
    rxa32: usize,
    /// Class-1 ring: last index, index bits, `- 1`.
    r1nm1: usize,
    r1a: usize,
    r1am1: usize,
    /// Count bits of the class-0 and class-1 packet queues.
    pmw: usize,
    pnw: usize,
    /// Zero padding of `rx_n` to 11 bits, of `rv_n` to 10 bits, of the
    /// completion and response counts to 16 bits, of `vaddr[pa-1:0]` to 10.
    rxnpad: String,
    rvpad: String,
    cqpad: String,
    rqpad: String,
    /// Zero padding of the held landing completions' count to 16 bits.
    lhpad: String,
    pmodpad: String,
    /// Landing-queue depth.
    lqd: usize,
    /// `mb_k` / `mw_k` as ring-index expressions.
    mbkx: String,
    mwkx: String,
    /// Queue texts: storage and pointers, resets, pointer updates.
    pm_queue: String,
    pn_queue: String,
    lq_queue: String,
    eq_queue: String,
    cq_queue: String,
    rq_queue: String,
    rd_queue: String,
    mb_ptrs: String,
    pm_reset: String,
    pn_reset: String,
    lq_reset: String,
    eq_reset: String,
    pm_update: String,
    pn_update: String,
    lq_update: String,
    eq_update: String,
    /// Resets and updates of the completion, response, read and mailbox
    /// queues.
    q_reset: String,
    q_update: String,
    /// Error queue: count bits, depth.
    eqw: usize,
    eqd: usize,
    /// Mailbox storage: last message index, last word index; count bits.
    mbnm1: usize,
    mbwnm1: usize,
    mbw: usize,
    /// Completion queue count bits.
    cqw: usize,
    /// Top bit of an NI-wide message slot index `{channel, slot}`.
    kiw: usize,
    /// `mbwa + 3`: the top address bit of a MB_DATA word's 16-byte word.
    mbwap3: usize,
    /// `2^addr_bits` in hex: the range limit.
    lim: String,
    /// Top bit of a completion kind / status code.
    cqcm1: usize,
    /// Zero padding of a completion status to the response flags.
    stflpad: String,
}

/// The Verilog of the receive path.
pub fn verilog(g: &Geometry, c: &Codes, r: &Records) -> Result<String> {
    let n = &g.p.ni;
    let rxn = 1usize << g.rxa;
    let q = |name, width, abits, depth| Queue {
        name,
        width,
        abits,
        depth,
    };
    let eq = q("eq", r.eq.width(), g.eqa, n.errq_depth);
    let cq = q("cq", r.cq.width(), g.cqa, n.cq_depth);
    let rq = q("rq", r.rq.width(), g.rqa, n.resp_queue_depth);
    let rd = q("rd", r.rd.width(), g.rda, n.read_queue_depth);
    let mb = q("mb", r.mb.width(), g.mba, n.mailbox_depth);
    let pm = q("pm", g.rxa + 33, g.rxa, rxn);
    let r1n = super::rx_class1_flits(n.max_payload_bytes);
    let r1a = r1n.trailing_zeros() as usize;
    let pn = q("pn", g.rxa + 33, r1a, r1n);
    let lq = q("lq", r.lq.width(), LQA, 1 << LQA);
    let four = [&cq, &rq, &rd, &mb];
    let storage = |q: &Queue| block(q.decl_mem() + &q.decl_ptrs());
    let (cq_w, eq_w) = register_words(r)?;
    render(
        &RdmaRx {
            k: g.keys(),
            c,
            r,
            rejn: 1 << REASON_BITS,
            cq_w,
            eq_w,
            rxnm1: rxn - 1,
            rxa: g.rxa,
            rxa1: g.rxa + 1,
            rxam1: g.rxa - 1,
            rxa32: g.rxa + 32,
            r1nm1: r1n - 1,
            r1a,
            r1am1: r1a - 1,
            pmw: g.rxa + 1,
            pnw: r1a + 1,
            rxnpad: pad(11 - (g.rxa + 1)),
            rvpad: pad(10 - (g.rxa + 1)),
            cqpad: pad(16 - (g.cqa + 1)),
            rqpad: pad(16 - (g.rqa + 1)),
            lhpad: pad(16 - (LQA + 1)),
            pmodpad: pad(10 - g.pa),
            lqd: 1 << LQA,
            mbkx: fit("mb_k", 5, g.rxa),
            mwkx: fit("mw_k", 5, g.rxa),
            pm_queue: storage(&pm),
            pn_queue: storage(&pn),
            lq_queue: storage(&lq),
            eq_queue: storage(&eq),
            cq_queue: storage(&cq),
            rq_queue: storage(&rq),
            rd_queue: storage(&rd),
            mb_ptrs: block(mb.decl_ptrs()),
            pm_reset: block(pm.reset()),
            pn_reset: block(pn.reset()),
            lq_reset: block(lq.reset()),
            eq_reset: block(eq.reset()),
            pm_update: block(pm.update()),
            pn_update: block(pn.update()),
            lq_update: block(lq.update()),
            eq_update: block(eq.update()),
            q_reset: block(four.iter().map(|q| q.reset()).collect()),
            q_update: block(four.iter().map(|q| q.update()).collect()),
            eqw: g.eqa + 1,
            eqd: n.errq_depth,
            mbnm1: (1usize << g.mba) - 1,
            mbwnm1: (1usize << (g.mba + g.mbwa)) - 1,
            mbw: g.mba + 1,
            cqw: g.cqa + 1,
            kiw: g.cw + g.sa - 1,
            mbwap3: g.mbwa + 3,
            lim: format!("{:x}", 1u64 << n.addr_bits),
            cqcm1: CQ_CODE_BITS - 1,
            stflpad: pad(FLAGS.width as usize - CQ_CODE_BITS),
        },
        "rdma_rx",
    )
}

/// The completion-queue and error-queue head's register words (CQ_W0..W2,
/// ERRQ_W0..W4): the entry's fields (`cq_rd`, `eq_rd`) placed at the
/// golden word fields.
fn register_words(r: &Records) -> Result<(Vec<String>, Vec<String>)> {
    let at = |f: Field| Bits::new(f.offset as usize, f.width as usize, f.name, false);
    let word = |v: &str, rec: &super::vgen::Record, put: &[(Field, &str)]| {
        put.iter()
            .fold(Word::new(32), |w, &(f, name)| {
                let s = rec.at(name);
                w.put(at(f), format!("{v}{s}"), s.width)
            })
            .text()
    };
    let cq_w = vec![
        word(
            "cq_rd",
            &r.cq,
            &[
                (cqw::CQ_W0_TXID, "txid"),
                (cqw::CQ_W0_REASON, "reason"),
                (cqw::CQ_W0_STATUS, "status"),
                (cqw::CQ_W0_KIND, "kind"),
            ],
        ),
        word("cq_rd", &r.cq, &[(cqw::CQ_W1_PEER, "peer")]),
        word("cq_rd", &r.cq, &[(cqw::CQ_W2_PDID, "pdid")]),
    ];
    // ERRQ_W0's low bits {footer_ok, header_ok, reason} are one slice of
    // the entry, as they are one run of bits in the word.
    let (rs, ho, fo) = (
        eqw::ERRQ_W0_REASON,
        eqw::ERRQ_W0_HEADER_OK,
        eqw::ERRQ_W0_FOOTER_OK,
    );
    ensure!(
        ho.offset == rs.offset + rs.width && fo.offset == ho.offset + ho.width,
        "NI RTL: ERRQ_W0 reason, header_ok, footer_ok must be adjacent, from the low bit up"
    );
    let flags = Bits::new(
        rs.offset as usize,
        (rs.width + ho.width + fo.width) as usize,
        "flags",
        false,
    );
    let low = r.eq.span("footer_ok", "reason");
    let vaddr = r.eq.at("vaddr");
    let (vlo, vhi) = (eqw::ERRQ_W3_VADDR_LO, eqw::ERRQ_W4_VADDR_HI);
    ensure!(
        (vlo.width + vhi.width) as usize == vaddr.width,
        "NI RTL: ERRQ_W3 and ERRQ_W4 must hold the whole vaddr"
    );
    let eq_w = vec![
        Word::new(32)
            .put(
                at(eqw::ERRQ_W0_TXID),
                format!("eq_rd{}", r.eq.at("txid")),
                r.eq.at("txid").width,
            )
            .put(
                at(eqw::ERRQ_W0_PTYPE),
                format!("eq_rd{}", r.eq.at("ptype")),
                r.eq.at("ptype").width,
            )
            .put(flags, format!("eq_rd{low}"), low.width)
            .text(),
        word("eq_rd", &r.eq, &[(eqw::ERRQ_W1_SRC, "src")]),
        word(
            "eq_rd",
            &r.eq,
            &[(eqw::ERRQ_W2_SIZE, "size"), (eqw::ERRQ_W2_PDID, "pdid")],
        ),
        Word::new(32)
            .put(
                at(vlo),
                format!("eq_rd{}", vaddr.low(vlo.width as usize)),
                vlo.width as usize,
            )
            .text(),
        Word::new(32)
            .put(
                at(vhi),
                format!("eq_rd{}", vaddr.above(vlo.width as usize)),
                vhi.width as usize,
            )
            .text(),
    ];
    Ok((cq_w, eq_w))
}
