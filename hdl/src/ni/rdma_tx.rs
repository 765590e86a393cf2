//! `rdma_tx`: the transmit scheduler, segmentation, payload datapath and
//! flit output with credits (generated Verilog, part of the `ni` top).
//!
//! Three stages with queues between them, so that the memory latency of a
//! packet's payload overlaps with sending the packets before it (read-ahead):
//!
//! 1. **Scheduler** (pick, then LOAD the next cycle): picks the next packet,
//!    loads its header/footer fields into the record `e_*`, starts its
//!    AXI4 reads ([`super::axi_master`]) and, one cycle later, appends the
//!    record to the *packet queue* (`mq`, `tx_ahead` entries, LUTRAM). It
//!    picks again as soon as the previous packet's reads have all been
//!    issued (every AR accepted), as long as fewer than `tx_ahead`
//!    packets are picked and not yet sent, so up to `tx_ahead` packets'
//!    reads are outstanding. Every pick is the golden model's
//!    `emit_packet` instant, whatever is still queued; the AR of a packet
//!    never overlaps the next pick, so ARUSER is the last pick's PDID. A
//!    packetizer message is picked only when nothing is picked and unsent:
//!    its payload is read from its slot as it leaves, and the slot awaits
//!    its acknowledgement from the pick on (a forged acknowledgement could
//!    free it), so the time from pick to last word stays as short as
//!    without read-ahead. `tx_busy` = the scheduler cannot pick this cycle
//!    (loading, a read not yet issued, the packet queue full, or a message
//!    is next and the sender is not empty).
//! 2. **Realigner** (AXI4 R channel): for each data packet, in pick order
//!    (the *read-job queue* `rj`: source offset `e_shift`, beats `e_beats`,
//!    words), realigns the 16-byte beats (`{beat k+1, beat k} >> 8·(src
//!    mod 16)`, one priming beat when unaligned) into the *payload FIFO*
//!    (`pf`, two maximum packets of 128-bit words, LUTRAM), or straight to
//!    the sender when the FIFO is empty and the sender takes the word.
//!    RREADY is low while the FIFO is full: the memory holds the data
//!    meanwhile. With the allreduce engine, while a collective runs, a
//!    pick also needs FIFO room for a largest packet besides the words
//!    already owed to it (`pf_res`), so every issued read lands whatever
//!    the network does (see `super::allreduce`, "No cycle through the
//!    network").
//! 3. **Sender** (HDR / PAY / FTR over the packet queue's head `b_*`; while
//!    the queue is empty, the record being appended): one flit per cycle
//!    when the credit counter allows, the next packet's header right after
//!    a footer. Payload words pass through `word_q` (one register stage)
//!    from the payload FIFO, the message slot, or the read request's
//!    fields; bytes past the packet's size are zeroed. `Crc32` runs over the
//!    payload flits as they leave; its result is latched for the footer.
//!    The head leaves the queue with its footer.
//!
//! - **Pick** (`tx_pick`, class 0): the read-serve engine's next packet
//!   when the read queue holds a job (whatever TX_ENABLE; the pointer does
//!   not move); else,
//!   when TX_ENABLE and a channel has a queued message or descriptor, the
//!   first such channel at or after the round-robin pointer; a queued
//!   message before the head descriptor. The pointer moves past the
//!   picked channel.
//! - **Load**: the packet's header/footer fields. A message: its slot (the send-queue head, popped; slot → awaiting ack),
//!   txid `c·pkt_slots + slot`. A read descriptor: the request packet
//!   (payload `{32'd0, len, 22'd0, local}` = landing address and length,
//!   little-endian), popped. A write: the channel's transfer state
//!   (source, landing address, remaining, seq; from the descriptor when the
//!   transfer starts), `n = min(P - land mod P, remaining)` bytes; the
//!   descriptor is popped with its last packet. A read response: the same,
//!   from the read-serve state (`rs_*`, from the read queue's head job when
//!   it starts; type RdmaReadResp, requester, PDID, txid, notify of the
//!   request); the job is popped with its last packet. A write or read
//!   response pushes its read job and starts its AXI4 reads.
//!
//! - **Response lane** (`rsp_pick`, class 1, VC `resp_vc`): the response
//!   queue's head `{flags, txid, pdid, dest, ptype}` is encoded by its own
//!   header and footer encoders (`rsp_hdr`, `rsp_ftr`: no payload, payload
//!   CRC 0, first = last = 1) and sent as two flits in consecutive cycles,
//!   whatever TX_ENABLE. It starts when two `resp_vc` credits are free and
//!   its flits take the output before class-0 flits, also in the middle of
//!   a class-0 packet (flits of different VCs interleave on the link, as
//!   the router's per-VC input buffers allow; each VC's packets stay
//!   whole). With its own credit counter (`rcr_used`) it is independent of
//!   class-0 backpressure: a class-0 packet stalled mid-way for credits
//!   never holds a response back (see the `ni` module doc, "Message
//!   classes"). (Waiting for the class-0 packet boundary would let a cycle
//!   close again: a node's class-0 packet stalled for credits towards a
//!   node whose receive path waits for room in its response queue, which
//!   waits for that node's stalled packet in turn.)
//!
//! Latency: pick in cycle t, header on `out_*` at t+3 at the earliest
//! (LOAD t+1, append and HDR send t+2, output register). A long transfer
//! sends 18 flits per 18 cycles once the reads run `tx_ahead` packets
//! ahead (memory latency up to about `18·(tx_ahead - 1) - 10` cycles).
//!
//! # Parameter
//! `tx_ahead` ([`NiRtlParams::tx_ahead`](super::geometry::NiRtlParams::tx_ahead),
//! config key `ni.tx_ahead`, default [`DEFAULT_TX_AHEAD`]): packets the
//! scheduler may have picked and not yet sent, the depth of the packet and
//! read-job queues. It trades LUTRAM (two queues of `tx_ahead` entries; a
//! packet record is about 210 bits) for the memory latency the transmit
//! side hides. RTL only: every pick is still the golden model's `emit_packet`
//! instant, so the golden model does not depend on it (`tx_busy` tells the
//! bench when the RTL cannot pick).

use super::codes::Codes;
use super::geometry::{Geometry, Keys};
use super::records::Records;
use super::vgen::{block, pad, render, Queue, Record, Word};
use anyhow::Result;
use askama::Template;
use exanet_sim::ni::rdma_tx::READ_REQ_LEN;
use exanet_sim::packet::coords::Field;
use exanet_sim::packet::{footer, header};

/// Default `tx_ahead`: packets the scheduler may have picked and not yet
/// sent (the packet queue's entries), i.e. how far the AXI4 reads run
/// ahead: 8 covers about 116 cycles of memory latency at full rate.
pub const DEFAULT_TX_AHEAD: usize = 8;

/// Supported `tx_ahead`: powers of two (the queue pointers wrap by
/// overflow) from 2 (a 1-entry queue would have 0-bit pointers) to 32 (still
/// two bits per LUT as RAM32M; it hides 18·31 - 10 = 548 cycles of memory
/// latency, 3.5 µs at 156.25 MHz, and deeper queues only cost LUTRAM).
pub const TX_AHEAD_RANGE: std::ops::RangeInclusive<usize> = 2..=32;

/// The packet record from the load to the sender (most significant first).
fn record(g: &Geometry) -> Record {
    let w = |f: Field| f.width as usize;
    Record::new(
        vec![
            // 0 data (payload from the FIFO), 1 read request (payload
            // `rrlen`/`rrladdr`), 2 message (payload from slot `slot` of
            // channel `c`).
            ("kind", 2),
            ("ptype", w(header::PTYPE)),
            ("vaddr", w(header::VADDR)),
            // Payload bytes: at most 256.
            ("size", 9),
            ("dest", w(header::DEST)),
            ("pdid", w(header::PDID)),
            ("seq", w(footer::SEQ)),
            ("txid", w(footer::TXID)),
            ("first", w(footer::FIRST)),
            ("last", w(footer::LAST)),
            ("notify", w(footer::NOTIFY)),
            ("c", g.cw),
            ("slot", g.sa),
            ("rrlen", w(READ_REQ_LEN)),
            ("rrladdr", w(header::VADDR)),
        ]
        .into_iter()
        // An allreduce fragment's footer flags (step index) and user
        // field (communicator, op, dtype): with the engine only.
        .chain(
            g.ar.then_some([("flags", w(footer::FLAGS)), ("user", w(footer::USER))])
                .into_iter()
                .flatten(),
        )
        .collect(),
        false,
    )
}

/// The queues between the stages: packet records, read jobs (`{shift,
/// beats, words}`), payload words (two maximum packets).
fn queues(g: &Geometry) -> [Queue<'static>; 3] {
    let ahead = g.p.tx_ahead;
    let mqa = ahead.trailing_zeros() as usize;
    let pfd = (2 * g.p.ni.max_payload_bytes / 16).max(2);
    [
        Queue {
            name: "mq",
            width: record(g).width(),
            abits: mqa,
            depth: ahead,
        },
        Queue {
            name: "rj",
            width: 14,
            abits: mqa,
            depth: ahead,
        },
        Queue {
            name: "pf",
            width: 128,
            abits: pfd.trailing_zeros() as usize,
            depth: pfd,
        },
    ]
}

/// `templates/ni/rdma_tx.v`.
#[derive(Template)]
#[template(path = "ni/rdma_tx.v")]
struct RdmaTx<'a> {
    k: Keys,
    c: &'a Codes,
    r: &'a Records,
    /// `channels - 1`.
    cm1: usize,
    /// Zero padding of `l_land[pa-1:0]` to 9 bits.
    roompad: String,
    /// Packet queue: count bits, count bits + 1, depth.
    mqw: usize,
    mqw1: usize,
    mqd: usize,
    /// Payload FIFO: count bits, depth.
    pfw: usize,
    pfd: usize,
    /// Response queue and read queue count bits.
    rqw: usize,
    rdw: usize,
    /// `buffer_flits - 2`: the response lane starts with two credits.
    bufm2: usize,
    /// Pointer, count and push/pop declarations of the three queues, and
    /// the read-job and payload storage.
    queue_decls: String,
    /// The packet record: declarations of `e_*` and `b_*`, its width, the
    /// packet queue's storage, the concatenation of `e_*`, the unpacking
    /// into `b_*`.
    e_decl: String,
    b_decl: String,
    rec_w: usize,
    mq_mem: String,
    e_concat: String,
    b_unpack: String,
    /// Zero padding of a slot index to a 14-bit txid.
    txid_pad: String,
    /// Widths of the footer's flags and user fields.
    r_flagsw: usize,
    r_userw: usize,
    /// Zero padding of a 9-bit length to `addr_bits`.
    src_pad: String,
    /// A read request's payload word: `{zero, len, landing address}`.
    rr_word: String,
    /// Queue resets and pointer updates.
    q_reset: String,
    q_update: String,
    /// Read-request source bits above `addr_bits` (always 0 in an accepted
    /// request: the range check bounds it), for the unused-bits sink.
    rdunused: String,
}

/// The Verilog of the transmit engine.
pub fn verilog(g: &Geometry, c: &Codes, r: &Records) -> Result<String> {
    let n = &g.p.ni;
    let [mq, rj, pf] = queues(g);
    let rec = record(g);
    let q = [&mq, &rj, &pf];
    let mut queue_decls = String::new();
    for q in q {
        queue_decls.push_str(&q.decl_ptrs());
        queue_decls.push_str(&format!(
            "reg        {0}_push;\nreg        {0}_pop;\n",
            q.name
        ));
    }
    queue_decls.push_str(&rj.decl_mem());
    queue_decls.push_str(&pf.decl_mem());
    render(
        &RdmaTx {
            k: g.keys(),
            c,
            r,
            cm1: g.c - 1,
            roompad: pad(9 - g.pa),
            mqw: mq.abits + 1,
            mqw1: mq.abits + 2,
            mqd: mq.depth,
            pfw: pf.abits + 1,
            pfd: pf.depth,
            rqw: g.rqa + 1,
            rdw: g.rda + 1,
            bufm2: g.p.buffer_flits - 2,
            queue_decls: block(queue_decls),
            e_decl: block(rec.decl("e_")),
            b_decl: block(rec.decl("b_")),
            rec_w: rec.width(),
            mq_mem: block(mq.decl_mem()),
            e_concat: rec.concat("e_"),
            b_unpack: block(rec.unpack("b_", "b_rec")),
            rr_word: Word::new(128)
                .put(c.bits.rr_len, "b_rrlen", 32)
                .put(c.bits.rr_land, "b_rrladdr", 42)
                .text(),
            txid_pad: pad(14 - g.sa),
            r_flagsw: footer::FLAGS.width as usize,
            r_userw: footer::USER.width as usize,
            src_pad: pad(n.addr_bits as usize - 9),
            q_reset: block(q.iter().map(|q| q.reset()).collect()),
            q_update: block(q.iter().map(|q| q.update()).collect()),
            rdunused: if (n.addr_bits as usize) < r.rd.at("src").width {
                format!(", rd_e{}", r.rd.at("src").above(n.addr_bits as usize))
            } else {
                String::new()
            },
        },
        "rdma_tx",
    )
}
