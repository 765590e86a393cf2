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

use super::top::Geometry;
use super::vgen::{pad, Queue};
use anyhow::Result;
use std::fmt::Write as _;

const DECL: &str = r#"
// ===================== rdma_rx =====================
reg  [2:0] rx_st;
reg [@RXA@:0] rx_n;
reg [127:0] hdr_q;
reg [127:0] ftr_q;
reg [127:0] p1_q;
// Receive ring: every flit received, and its VC (for its credit).
(* ram_style = "distributed" *)
reg [127:0] rx_buf [0:@RXNM1@];
(* ram_style = "distributed" *)
reg  [3:0] rx_vcm [0:@RXNM1@];
// Class-1 ring (flits on VCs >= vcs_per_class).
(* ram_style = "distributed" *)
reg [127:0] r1_buf [0:@R1NM1@];
(* ram_style = "distributed" *)
reg  [3:0] r1_vcm [0:@R1NM1@];
reg [@RXAM1@:0] in_wp;
reg [@R1AM1@:0] in_wp1;
reg [@RXA@:0] rv_n;
reg [127:0] hin_q;
// Received packets not yet loaded for a decision, per class: {words,
// payload CRC-32}.
@PMQUEUE@@PNQUEUE@reg [@RXAM1@:0] dq_sp;
reg [@RXAM1@:0] dq_nx;
reg [@RXAM1@:0] dn_p;
reg [@RXAM1@:0] fr_p;
reg [@R1AM1@:0] dq_sp1;
reg [@R1AM1@:0] dq_nx1;
reg [@R1AM1@:0] dn_p1;
reg [@R1AM1@:0] fr_p1;
// The class of the packet being decided; a class-0 packet that yielded to
// class 1 while Busy (its words stay at dq_sp) and its record.
reg        rx_cls;
reg        c0_park;
reg [@RXA@:0] pk_n;
reg [31:0] pk_crc;
reg        rc_start;
reg        rc_valid;
reg [127:0] rc_data;
reg  [4:0] rc_bytes;
reg [31:0] rx_crc;
reg  [4:0] mw_k;
reg [127:0] mw_pq;
reg  [4:0] mw_beats;
reg  [3:0] mw_off;
reg  [8:0] mw_size;
reg [41:0] mw_addr;
reg [15:0] mw_pdid;
reg [31:0] rx_packets;
reg [31:0] rx_rejected;
reg [31:0] rx_hdrc;
reg [31:0] rx_bytes;
reg [31:0] rej_cnt [0:15];
// Error queue: {vaddr, size, pdid, src, txid, ptype, footer_ok, header_ok, reason}.
@EQQUEUE@// Completion queue: {pdid, peer, txid, reason, status, kind}.
@CQQUEUE@// Response queue: {flags, txid, pdid, dest, ptype}.
@RQQUEUE@// Read queue: {notify, txid, pdid, requester, len, landing address, source address}.
@RDQUEUE@// Mailbox: message words (2^mbwa per message) and {len, pdid, src}.
(* ram_style = "distributed" *)
reg [127:0] mb_mem [0:@MBWNM1@];
(* ram_style = "distributed" *)
reg [46:0] mb_meta [0:@MBNM1@];
@MBPTRS@reg  [4:0] mb_k;
reg        mb_cp;
// Damaged-transfer table: valid bits and {src, txid} keys.
reg [@PDM1@:0] tk_v;
reg [35:0] tk_key [0:@PDM1@];
reg        trk_lost;
reg        st_rxerr;
reg        st_eqovf;
reg        st_hdrc;
reg [31:0] mb_fulln;
reg [31:0] mb_retry;
reg [31:0] mb_denied;
reg [31:0] rd_busyn;
// Accepted data packets whose write has not landed (B), in order: the
// completion / notify response each posts then {cq?, cq entry, rq?, rq
// entry}; how many of them hold a completion / a response.
@LQQUEUE@reg  [4:0] lq_cqh;
reg  [4:0] lq_rqh;
// The packetizer message being sent (picked, tail flit not yet out): its
// NI-wide slot {channel, slot}.
reg        ms_v;
reg [@KIW@:0] ms_idx;

// Queue states and the damaged-transfer table lookup of the packet's
// (src, txid): hits, and the lowest free entry (one-hot).
reg        mb_full;
reg        cq_full;
reg        rq_full;
reg        rd_full;
reg [@PDM1@:0] tk_h;
reg [@PDM1@:0] tk_f1;
reg        w_land;
reg [126:0] lq_rd;
reg        lp_post;
always @(*) begin
    mb_full = (mb_count == @MBW@'d@MBD@);
    // Entries of writes still landing hold their slots.
    cq_full = ({@CQPAD@cq_count} + {11'd0, lq_cqh}) >= 16'd@CQD@;
    // The response lane's pop of this cycle comes first (golden order).
    rq_full = ({@RQPAD@rq_count} - {15'd0, rsp_go} + {11'd0, lq_rqh}) >= 16'd@RQD@;
    rd_full = (rd_count == @RDW@'d@RDD@);
@TKHIT@    tk_f1 = ~tk_v & (tk_v + @PD@'d1);
    // The oldest write in flight lands (B); what it posts.
    w_land = m_bvalid && (lq_count != 4'd0);
    lq_rd = lq_mem[lq_head];
    lp_post = w_land && (lq_rd[126] || lq_rd[65]);
end

// Message-slot lookup of a MailboxAck / MailboxNack: txid = c * pkt_slots + slot.
reg        k_ok;
reg [@CWM1@:0] k_c;
reg [13:0] k_t;
reg [@KIW@:0] k_idx;
reg        x_await;
always @(*) begin
    k_ok = 1'b0;
    k_c = @CW@'d0;
    k_t = 14'd0;
@KLOOKUP@    k_idx = {k_c, k_t[@SAM1@:0]};
    // Not while the message is still being sent: no receiver answers a
    // packet before its tail, and the slot is still being read out.
    x_await = k_ok && (ps_state[k_idx] == 2'd2) && (ps_dest[k_idx] == footer_unpack$src)
              && (ps_pdid[k_idx] == header_unpack$pdid) && !(ms_v && (ms_idx == k_idx));
end

always @(*) begin
    header_unpack$word = hdr_q;
    footer_unpack$word = ftr_q;
    crc_rx$clock = clock;
    crc_rx$reset = reset;
    crc_rx$start = rc_start;
    crc_rx$valid = rc_valid;
    crc_rx$data = rc_data;
    crc_rx$bytes = rc_bytes;
    header_rx$word = hin_q;
end

// Checks, in the golden order.
reg [10:0] x_pw;
reg        x_wc_ok;
reg  [4:0] x_pt;
reg        x_tcls;
reg        x_data;
reg        x_single;
reg  [9:0] x_pmod;
reg        x_fmt;
reg        x_range_ok;
reg [127:0] x_p1;
reg [64:0] x_rqend;
reg [43:0] x_end;
reg        x_hold;
reg        x_pd;
reg  [3:0] x_reason;
reg        x_hok;
reg        x_fok;
reg        x_accept;
reg        x_mb;
reg        x_ack;
reg        x_last;
reg        x_tkhit;
reg  [1:0] x_st;
reg        x_rsp_rej;
reg        x_need_cq;
reg        x_need_rq;
reg        x_need_rd;
reg        x_rdbusy;
reg        x_prot;
reg        x_full;
reg        x_cp;
reg        x_try;
reg        x_commit;
reg        x_busy;
reg        x_write;
reg        x_defer;
reg  [4:0] x_rq_pt;
reg  [7:0] x_rq_fl;
reg [64:0] x_rq_ent;
reg  [1:0] x_cq_kind;
reg  [1:0] x_cq_st;
reg  [3:0] x_cq_rs;
reg [59:0] x_cq_ent;
reg        ak_fire;
reg        ak_retry;
reg        ak_deny;
always @(*) begin
    x_pw = {1'b0, header_unpack$size[13:4]} + {10'd0, header_unpack$size[3:0] != 4'd0};
    x_wc_ok = ({@RXNPAD@rx_n} == x_pw + 11'd2);
    x_pt = header_unpack$ptype;
    // The type's message class: control responses are class 1.
    x_tcls = (x_pt >= 5'h11) && (x_pt <= 5'h15);
    x_data = (x_pt == 5'h01) || (x_pt == 5'h10);
    x_single = footer_unpack$first && footer_unpack$last && (footer_unpack$seq == 14'd0);
    x_pmod = {@PMODPAD@header_unpack$vaddr[@PAM1@:0]} + {1'b0, header_unpack$size[8:0]};
    x_fmt = 1'b0;
    case (x_pt)
        5'h01, 5'h10: x_fmt = (header_unpack$size == 14'd0) || (header_unpack$size > 14'd@P@)
                              || (x_pmod > 10'd@P@);
        5'h02: x_fmt = !x_single || (header_unpack$size != 14'd16) || (x_p1[127:96] != 32'd0)
                       || (x_p1[95:64] == 32'd0) || (x_rqend > 65'h400_0000_0000);
        5'h03: x_fmt = !x_single || (header_unpack$size == 14'd0) || (header_unpack$size > 14'd@MB@);
        5'h11: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags > 8'd2);
        5'h13: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags == 8'd0)
                       || (footer_unpack$flags > 8'd12);
        5'h14: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags != 8'd0);
        5'h15: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags > 8'd11);
        default: x_fmt = 1'b0;
    endcase
    x_p1 = p1_q;
    x_rqend = {1'b0, x_p1[63:0]} + {33'd0, x_p1[95:64]};
    // The range the protection check covers: a data packet's bytes, or the
    // bytes a read request asks for.
    x_prot = x_data || (x_pt == 5'h02);
    x_end = {2'd0, header_unpack$vaddr} + ((x_pt == 5'h02) ? {12'd0, x_p1[95:64]} : {30'd0, header_unpack$size});
    x_range_ok = (x_end <= 44'h@LIM@);
"#;

const DECIDE: &str = r#"
    x_hok = 1'b0;
    x_fok = 1'b0;
    x_reason = 4'd0;
    if (rx_n < @RXA1@'d2) x_reason = 4'd4;
    else if (header_unpack$double_err) begin x_reason = 4'd1; x_fok = footer_unpack$crc8_ok; end
    else if (!header_unpack$ptype_known) begin x_reason = 4'd2; x_fok = footer_unpack$crc8_ok; end
    else begin
        x_hok = 1'b1;
        x_fok = footer_unpack$crc8_ok;
        if (!footer_unpack$crc8_ok) x_reason = 4'd3;
        else if (!x_wc_ok) x_reason = 4'd4;
        else if (header_unpack$dest != node) x_reason = 4'd5;
        else if (x_tcls != rx_cls) x_reason = 4'd11;
        else if (rx_crc != footer_unpack$payload_crc) x_reason = 4'd6;
        else if ((x_pt == 5'h04) || (x_pt == 5'h12)) x_reason = 4'd10;
        else if (x_fmt) x_reason = 4'd4;
        else if (x_prot && !x_range_ok) x_reason = 4'd7;
        else if (x_prot && !x_hold) x_reason = 4'd7;
        else if (x_prot && !x_pd) x_reason = 4'd8;
        else if ((x_pt == 5'h03) && !mbox_q[16] && (mbox_q[15:0] != header_unpack$pdid)) x_reason = 4'd8;
        else if (((x_pt == 5'h14) || (x_pt == 5'h15)) && !x_await) x_reason = 4'd9;
    end
    x_accept = (x_reason == 4'd0);
    x_mb = (x_pt == 5'h03);
    x_ack = (x_pt == 5'h14) || (x_pt == 5'h15);
    x_last = footer_unpack$last;
    x_tkhit = (tk_h != @PD@'d0);
    // Completion status: the mark is cleared first when first = 1.
    x_st = (x_data && !footer_unpack$first && x_tkhit) ? 2'd1 : (trk_lost ? 2'd2 : 2'd0);
    // What the packet needs before it may be consumed (else Busy).
    x_rsp_rej = !x_accept && x_hok && x_fok && (x_reason != 4'd5) && (x_reason != 4'd11)
                && (x_mb || (x_pt == 5'h02));
    x_need_cq = x_accept && ((x_data && x_last) || (x_pt == 5'h11) || (x_pt == 5'h13));
    // A read request finding the read queue full is answered
    // Nack(READ_BUSY = 12) instead of waiting (class 0 never waits for it).
    x_rdbusy = x_accept && (x_pt == 5'h02) && rd_full;
    x_need_rq = x_rsp_rej || x_rdbusy || (x_accept && ((x_data && x_last && footer_unpack$notify) || x_mb));
    x_need_rd = x_accept && (x_pt == 5'h02) && !rd_full;
    x_full = (x_need_cq && cq_full) || (x_need_rq && rq_full);
    // A message the mailbox takes is copied into its tail slot first.
    x_cp = (rx_st == 3'd2) && x_accept && x_mb && !mb_full && !mb_cp;
    // No decision while the scheduler picks or loads (their queue and slot
    // effects land first), nor while copying, nor in a cycle a landing write
    // posts (one push per queue and cycle), nor for a data packet while the
    // landing queue is full.
    x_try = (rx_st == 3'd2) && !pick_now && !eng_load && !reset && !x_cp && !lp_post
            && !(x_accept && x_data && (lq_count == 4'd@LQD@));
    x_commit = x_try && !x_full;
    x_busy = x_try && x_full;
    x_write = x_commit && x_accept && x_data;
    // A data packet's completion and notify response are posted when its
    // write lands (B), not here: software must not see a completion before
    // the data. They wait in the landing queue (their room counted above).
    x_defer = x_write;
    // The response it causes, and the completion it posts.
    if (!x_accept) begin
        x_rq_pt = x_mb ? 5'h15 : 5'h13;
        x_rq_fl = {4'd0, x_reason};
    end else if (x_mb) begin
        x_rq_pt = mb_full ? 5'h15 : 5'h14;
        x_rq_fl = 8'd0;
    end else if (x_rdbusy) begin
        x_rq_pt = 5'h13;
        x_rq_fl = 8'd12;
    end else begin
        x_rq_pt = 5'h11;
        x_rq_fl = {6'd0, x_st};
    end
    x_rq_ent = {x_rq_fl, footer_unpack$txid, header_unpack$pdid, footer_unpack$src, x_rq_pt};
    x_cq_kind = (x_pt == 5'h01) ? 2'd1 : ((x_pt == 5'h11) ? 2'd3 : 2'd2);
    x_cq_st = (x_pt == 5'h11) ? footer_unpack$flags[1:0] : ((x_pt == 5'h13) ? 2'd3 : x_st);
    x_cq_rs = (x_pt == 5'h13) ? footer_unpack$flags[3:0] : 4'd0;
    x_cq_ent = {header_unpack$pdid, footer_unpack$src, footer_unpack$txid, x_cq_rs, x_cq_st, x_cq_kind};
    // An acknowledgement of one of this node's messages.
    ak_fire = x_commit && x_accept && x_ack;
    ak_retry = (x_pt == 5'h15) && ((footer_unpack$flags == 8'd0) || (footer_unpack$flags == 8'd6));
    ak_deny = (x_pt == 5'h15) && !ak_retry;
end

// Completion, response and mailbox queues: pushes at the decision (a data
// packet's completion and notify response: from the landing queue at its
// B), pops by software (CQ_POP, MB_POP) and by the scheduler (responses).
reg        cq_wr;
reg        rq_wr;
reg        lp_cq;
reg        lp_rq;
reg        lq_push;
reg        lq_pop;
reg        cq_push;
reg        cq_pop;
reg        rq_push;
reg        rq_pop;
reg        mb_push;
reg        mb_pop;
reg        rd_push;
reg [59:0] cq_rd;
reg [31:0] cq_w0;
reg [31:0] cq_w1;
reg [31:0] cq_w2;
reg [64:0] rq_rd;
reg [46:0] mb_hm;
reg  [8:0] mb_hlen;
reg [127:0] mb_rw;
reg [31:0] mb_rs;
reg  [8:0] mb_b0;
reg [31:0] mb_dw;
always @(*) begin
    cq_wr = x_commit && x_need_cq && !x_defer;
    rq_wr = x_commit && x_need_rq && !x_defer;
    lq_push = x_write;
    lq_pop = w_land;
    lp_cq = w_land && lq_rd[126];
    lp_rq = w_land && lq_rd[65];
    cq_push = cq_wr || lp_cq;
    rq_push = rq_wr || lp_rq;
    mb_push = x_commit && x_accept && x_mb && !mb_full;
    cq_pop = wr_fire && a_cqpop && ((cq_count != @CQW@'d0) || cq_push);
    mb_pop = wr_fire && a_mbpop && ((mb_count != @MBW@'d0) || mb_push);
    rq_pop = rsp_go;
    rd_push = x_commit && x_need_rd;
    cq_rd = (cq_count == @CQW@'d0) ? 60'd0 : cq_mem[cq_head];
    cq_w0 = {2'd0, cq_rd[21:8], 4'd0, cq_rd[7:4], 2'd0, cq_rd[3:2], 2'd0, cq_rd[1:0]};
    cq_w1 = {10'd0, cq_rd[43:22]};
    cq_w2 = {16'd0, cq_rd[59:44]};
    rq_rd = rq_mem[rq_head];
    // MB_DATA[i] of the head message, i = s_araddr[7:2]; bytes past MB_LEN read 0.
    mb_hm = (mb_count == @MBW@'d0) ? 47'd0 : mb_meta[mb_head];
    mb_hlen = mb_hm[46:38];
    mb_rw = mb_mem[{mb_head, s_araddr[@MBWAP3@:4]}];
    case (s_araddr[3:2])
        2'd0: mb_rs = mb_rw[31:0];
        2'd1: mb_rs = mb_rw[63:32];
        2'd2: mb_rs = mb_rw[95:64];
        default: mb_rs = mb_rw[127:96];
    endcase
    mb_b0 = {1'b0, s_araddr[7:2], 2'd0};
    mb_dw = mb_rs & {((mb_b0 + 9'd3) < mb_hlen) ? 8'hFF : 8'h00, ((mb_b0 + 9'd2) < mb_hlen) ? 8'hFF : 8'h00,
                           ((mb_b0 + 9'd1) < mb_hlen) ? 8'hFF : 8'h00, (mb_b0 < mb_hlen) ? 8'hFF : 8'h00};
end
always @(posedge clock) begin
    if (cq_wr) cq_mem[cq_tail] <= x_cq_ent;
    else if (lp_cq) cq_mem[cq_tail] <= lq_rd[125:66];
    if (rq_wr) rq_mem[rq_tail] <= x_rq_ent;
    else if (lp_rq) rq_mem[rq_tail] <= lq_rd[64:0];
    if (lq_push) lq_mem[lq_tail] <= {x_need_cq, x_cq_ent, x_need_rq, x_rq_ent};
    if (rd_push) rd_mem[rd_tail] <= {footer_unpack$notify, footer_unpack$txid, header_unpack$pdid, footer_unpack$src,
                                     x_p1[95:64], x_p1[41:0], header_unpack$vaddr};
    if (mb_push) mb_meta[mb_tail] <= {header_unpack$size[8:0], header_unpack$pdid, footer_unpack$src};
end
always @(posedge clock) begin
    if (rx_st == 3'd7) mb_mem[{mb_tail, mb_k[@MBWAM1@:0]}] <= rx_buf[rd_a];
end
always @(posedge clock) begin
    if (reset) begin
@QRESET@    end else begin
@QUPDATE@    end
end

// The message being sent: from the send-queue pop (LOAD) to its tail flit
// on the output. At most one message is in flight, and its tail is the
// first one out after its pop.
always @(posedge clock) begin
    if (reset) ms_v <= 1'b0;
    else if (pq_pop) begin
        ms_v <= 1'b1;
        ms_idx <= {e_c, pq_slot};
    end else if (ov_q && ot_q && !ol_q) ms_v <= 1'b0;
end

// Sticky STATUS bits, the damaged-transfer table, mailbox counters. The
// golden order within a cycle: the decision, then a STATUS write (W1C).
reg tk_set;
always @(*) begin
    tk_set = x_commit && !x_accept && x_fok && !x_last && !x_tkhit && (tk_f1 != @PD@'d0);
end
always @(posedge clock) begin
@TKKEY@end
always @(posedge clock) begin
    if (reset) begin
        tk_v <= @PD@'d0;
        trk_lost <= 1'b0;
        st_rxerr <= 1'b0;
        st_eqovf <= 1'b0;
        st_hdrc <= 1'b0;
        mb_fulln <= 32'd0;
        mb_retry <= 32'd0;
        mb_denied <= 32'd0;
        rd_busyn <= 32'd0;
    end else begin
        if (x_commit) begin
            if (x_hok && header_unpack$single_err) st_hdrc <= 1'b1;
            if (!x_accept) begin
                st_rxerr <= 1'b1;
                if (eq_count == @EQW@'d@EQD@) st_eqovf <= 1'b1;
                if (!x_fok) trk_lost <= 1'b1;
                else if (!x_last) begin
                    if (tk_set) tk_v <= tk_v | tk_f1;
                    else if (!x_tkhit) trk_lost <= 1'b1;
                end else if (x_hok && x_data) tk_v <= tk_v & ~tk_h;
            end else if (x_data && (footer_unpack$first || x_last)) tk_v <= tk_v & ~tk_h;
            if (x_accept && x_mb && mb_full) mb_fulln <= mb_fulln + 32'd1;
            if (x_rdbusy) rd_busyn <= rd_busyn + 32'd1;
        end
        if (ak_fire && ak_retry) mb_retry <= mb_retry + 32'd1;
        if (ak_fire && ak_deny) mb_denied <= mb_denied + 32'd1;
        if (wr_fire && a_status) begin
            if (s_wdata[0]) st_rxerr <= 1'b0;
            if (s_wdata[1]) st_eqovf <= 1'b0;
            if (s_wdata[2]) trk_lost <= 1'b0;
            if (s_wdata[3]) st_hdrc <= 1'b0;
        end
    end
end

// Error queue: push a rejected packet's trusted fields; ERRQ_POP pops
// after the push of the same cycle (the golden order: receive, then write).
reg        eq_push;
reg        eq_pop;
reg [118:0] eq_ent;
reg [118:0] eq_rd;
reg [31:0] eq_w0;
reg [31:0] eq_w1;
reg [31:0] eq_w2;
reg [31:0] eq_w3;
reg [31:0] eq_w4;
always @(*) begin
    eq_push = x_commit && !x_accept && (eq_count != @EQW@'d@EQD@);
    eq_pop = wr_fire && a_eqpop && ((eq_count != @EQW@'d0) || eq_push);
    eq_ent = {x_hok ? header_unpack$vaddr : 42'd0, x_hok ? header_unpack$size : 14'd0,
              x_hok ? header_unpack$pdid : 16'd0, x_fok ? footer_unpack$src : 22'd0,
              x_fok ? footer_unpack$txid : 14'd0, x_hok ? header_unpack$ptype : 5'd0,
              x_fok, x_hok, x_reason};
    eq_rd = (eq_count == @EQW@'d0) ? 119'd0 : eq_mem[eq_head];
    eq_w0 = {2'd0, eq_rd[24:11], 3'd0, eq_rd[10:6], 2'd0, eq_rd[5:0]};
    eq_w1 = {10'd0, eq_rd[46:25]};
    eq_w2 = {2'd0, eq_rd[76:63], eq_rd[62:47]};
    eq_w3 = eq_rd[108:77];
    eq_w4 = {22'd0, eq_rd[118:109]};
end
always @(posedge clock) begin
    if (eq_push) eq_mem[eq_tail] <= eq_ent;
end
always @(posedge clock) begin
    if (reset) begin
@EQRESET@    end else begin
@EQUPDATE@    end
end

// AXI4 write burst: realigned payload words, strobes for [off, off + size).
// `rd_a`: the ring word a W beat (or a mailbox copy) reads, payload word k
// of the packet being decided; `mw_pq` holds the previous one.
reg [@RXAM1@:0] rd_a;
reg        cr1;
reg [255:0] mw_cat;
reg [255:0] mw_sh;
reg  [9:0] mw_lo16;
reg  [9:0] mw_hi16;
reg  [4:0] mw_lo;
reg  [4:0] mw_hi;
reg [16:0] mw_mhi;
reg [16:0] mw_mlo;
always @(*) begin
    rd_a = dq_sp + @RXA@'d1 + ((rx_st == 3'd7) ? @MBKX@ : @MWKX@);
    mw_cat = {rx_buf[rd_a], mw_pq};
    mw_sh = mw_cat >> (9'd128 - {2'd0, mw_off, 3'd0});
    mw_lo16 = (mw_k == 5'd0) ? {6'd0, mw_off} : 10'd0;
    mw_hi16 = {6'd0, mw_off} + {1'b0, mw_size} - {1'b0, mw_k, 4'd0};
    mw_lo = mw_lo16[4:0];
    mw_hi = (mw_hi16 > 10'd16) ? 5'd16 : mw_hi16[4:0];
    mw_mhi = (17'd1 << mw_hi) - 17'd1;
    mw_mlo = (17'd1 << mw_lo) - 17'd1;
    m_awvalid = (rx_st == 3'd3);
    m_awaddr = {mw_addr[41:4], 4'd0};
    m_awlen = {3'd0, mw_beats - 5'd1};
    m_awsize = 3'd4;
    m_awburst = 2'd1;
    m_awuser = mw_pdid;
    m_wvalid = (rx_st == 3'd4);
    m_wdata = mw_sh[127:0];
    m_wstrb = mw_mhi[15:0] & ~mw_mlo[15:0];
    m_wlast = (mw_k == mw_beats - 5'd1);
    m_bready = (lq_count != 4'd0);
    // A credit per ring word freed, in order within its ring, on its flit's
    // VC; class 1 first.
    cr1 = (fr_p1 != dn_p1);
    credit_out_valid = cr1 || (fr_p != dn_p);
    credit_out_vc = cr1 ? r1_vcm[fr_p1] : rx_vcm[fr_p];
    rx_commit = x_commit;
    rx_busy = x_busy;
    rx_class = rx_cls;
end

// Receive side: the payload CRC-32 as the flits arrive (the byte count of
// the last payload word from the corrected header, `header_rx`), a packet
// record at each tail. Decision side: load the next record (its header,
// footer and first payload word) when idle or as the previous packet ends.
reg  [9:0] rv_pw;
reg  [4:0] rv_lastb;
reg  [8:0] x_wtmp;
reg        ld_go;
reg        ld_yield;
reg        ld_c1;
reg        ld_park;
reg        in_c1;
reg        pm_push;
reg        pm_pop;
reg        pn_push;
reg        pn_pop;
reg [@RXAM1@:0] ld_base;
reg [@RXAM1@:0] ld_n;
reg [@R1AM1@:0] ld_n1;
reg [@RXA@:0] pm_n;
reg [@RXA@:0] pn_n;
reg [@RXA@:0] pm_nw;
always @(*) begin
    rv_pw = header_rx$size[13:4] + {9'd0, header_rx$size[3:0] != 4'd0};
    rv_lastb = (header_rx$size[3:0] == 4'd0) ? 5'd16 : {1'b0, header_rx$size[3:0]};
    x_wtmp = {5'd0, header_unpack$vaddr[3:0]} + header_unpack$size[8:0] + 9'd15;
    pm_nw = rv_n + @RXA1@'d1;
    // The class of an arriving flit: its VC's (packets do not interleave).
    in_c1 = (in_vc >= 4'd@VPC@);
    pm_push = in_valid && in_tail && !in_c1;
    pn_push = in_valid && in_tail && in_c1;
    pm_n = pm_mem[pm_head][@RXA32@:32];
    pn_n = pn_mem[pn_head][@RXA32@:32];
    // The next decision: a class-1 packet first; else the class-0 packet
    // that yielded (reloaded from its words), else the next class-0 one. A
    // class-0 packet found Busy yields to a waiting class-1 packet.
    ld_c1 = (pn_count != @PNW@'d0);
    ld_park = !ld_c1 && c0_park;
    ld_base = ld_park ? dq_sp : dq_nx;
    ld_n = (ld_park ? pk_n[@RXAM1@:0] : pm_n[@RXAM1@:0]) - @RXA@'d1;
    ld_n1 = pn_n[@R1AM1@:0] - @R1A@'d1;
    ld_yield = (rx_st == 3'd2) && x_busy && !rx_cls && ld_c1;
    ld_go = (ld_c1 || c0_park || (pm_count != @PMW@'d0)) && !reset
            && ((rx_st == 3'd0) || ((rx_st == 3'd2) && x_commit && !x_write) || ld_yield
                || ((rx_st == 3'd4) && m_wready && m_wlast));
    pm_pop = ld_go && !ld_c1 && !c0_park;
    pn_pop = ld_go && ld_c1;
end

always @(posedge clock) begin
    if (in_valid && !in_c1) begin
        rx_buf[in_wp] <= in_data;
        rx_vcm[in_wp] <= in_vc;
    end
    if (in_valid && in_c1) begin
        r1_buf[in_wp1] <= in_data;
        r1_vcm[in_wp1] <= in_vc;
    end
    if (pm_push) pm_mem[pm_tail] <= {pm_nw, crc_rx$crc};
    if (pn_push) pn_mem[pn_tail] <= {pm_nw, crc_rx$crc};
end

always @(posedge clock) begin
    if (reset) begin
        rx_st <= 3'd0;
        in_wp <= @RXA@'d0;
        in_wp1 <= @R1A@'d0;
        rv_n <= @RXA1@'d0;
        dq_sp <= @RXA@'d0;
        dq_nx <= @RXA@'d0;
        dn_p <= @RXA@'d0;
        fr_p <= @RXA@'d0;
        dq_sp1 <= @R1A@'d0;
        dq_nx1 <= @R1A@'d0;
        dn_p1 <= @R1A@'d0;
        fr_p1 <= @R1A@'d0;
        rx_cls <= 1'b0;
        c0_park <= 1'b0;
        rc_start <= 1'b0;
        rc_valid <= 1'b0;
        mb_cp <= 1'b0;
        lq_cqh <= 5'd0;
        lq_rqh <= 5'd0;
        rx_packets <= 32'd0;
        rx_rejected <= 32'd0;
        rx_hdrc <= 32'd0;
        rx_bytes <= 32'd0;
@PMRESET@@PNRESET@@LQRESET@@REJRESET@    end else begin
@PMUPDATE@@PNUPDATE@@LQUPDATE@        // Receive: every flit into the ring; the packet's first word (its
        // head) restarts the CRC, its payload words feed it.
        rc_start <= in_valid && (rv_n == @RXA1@'d0);
        rc_valid <= in_valid && (rv_n != @RXA1@'d0) && !in_tail;
        rc_data <= in_data;
        rc_bytes <= ({@RVPAD@rv_n} == rv_pw) ? rv_lastb : 5'd16;
        if (in_valid) begin
            if (in_c1) in_wp1 <= in_wp1 + @R1A@'d1;
            else in_wp <= in_wp + @RXA@'d1;
            rv_n <= in_tail ? @RXA1@'d0 : rv_n + @RXA1@'d1;
            if (rv_n == @RXA1@'d0) hin_q <= in_data;
        end
        if (cr1) fr_p1 <= fr_p1 + @R1A@'d1;
        else if (credit_out_valid) fr_p <= fr_p + @RXA@'d1;
        lq_cqh <= lq_cqh + {4'd0, lq_push && x_need_cq} - {4'd0, lp_cq};
        lq_rqh <= lq_rqh + {4'd0, lq_push && x_need_rq} - {4'd0, lp_rq};
        if (ld_yield) begin
            c0_park <= 1'b1;
            pk_n <= rx_n;
            pk_crc <= rx_crc;
        end
        if (ld_go) begin
            rx_cls <= ld_c1;
            mb_cp <= 1'b0;
            if (ld_c1) begin
                hdr_q <= r1_buf[dq_nx1];
                ftr_q <= r1_buf[dq_nx1 + ld_n1];
                p1_q <= r1_buf[dq_nx1 + @R1A@'d1];
                rx_n <= pn_n;
                rx_crc <= pn_mem[pn_head][31:0];
                dq_sp1 <= dq_nx1;
                dq_nx1 <= dq_nx1 + pn_n[@R1AM1@:0];
            end else begin
                hdr_q <= rx_buf[ld_base];
                ftr_q <= rx_buf[ld_base + ld_n];
                p1_q <= rx_buf[ld_base + @RXA@'d1];
                if (ld_park) begin
                    c0_park <= 1'b0;
                    rx_n <= pk_n;
                    rx_crc <= pk_crc;
                end else begin
                    rx_n <= pm_n;
                    rx_crc <= pm_mem[pm_head][31:0];
                    dq_sp <= dq_nx;
                    dq_nx <= dq_nx + pm_n[@RXAM1@:0];
                end
            end
        end
        case (rx_st)
            3'd0: if (ld_go) rx_st <= 3'd2;
            3'd2: if (x_cp) begin
                rx_st <= 3'd7;
                mb_k <= 5'd0;
            end else if (x_commit) begin
                rx_packets <= rx_packets + 32'd1;
                if (x_hok && header_unpack$single_err) rx_hdrc <= rx_hdrc + 32'd1;
                if (!x_accept) begin
                    rx_rejected <= rx_rejected + 32'd1;
                    rej_cnt[x_reason] <= rej_cnt[x_reason] + 32'd1;
                end
                if (x_write) begin
                    rx_bytes <= rx_bytes + {18'd0, header_unpack$size};
                    rx_st <= 3'd3;
                    mw_addr <= header_unpack$vaddr;
                    mw_off <= header_unpack$vaddr[3:0];
                    mw_size <= header_unpack$size[8:0];
                    mw_beats <= x_wtmp[8:4];
                    mw_pdid <= header_unpack$pdid;
                    mw_k <= 5'd0;
                end else begin
                    // Its words are free: credits from the next cycle.
                    if (rx_cls) dn_p1 <= dq_sp1 + rx_n[@R1AM1@:0];
                    else dn_p <= dq_sp + rx_n[@RXAM1@:0];
                    if (!ld_go) rx_st <= 3'd0;
                end
            end
            3'd3: if (m_awready) rx_st <= 3'd4;
            3'd4: if (m_wready) begin
                mw_k <= mw_k + 5'd1;
                mw_pq <= rx_buf[rd_a];
                if (m_wlast) begin
                    dn_p <= dq_sp + rx_n[@RXAM1@:0];
                    rx_st <= ld_go ? 3'd2 : 3'd0;
                end
            end
            3'd7: begin
                // Copy payload words 1..MB16 into the mailbox tail slot.
                mb_k <= mb_k + 5'd1;
                if (mb_k == 5'd@MB16M1@) begin
                    mb_cp <= 1'b1;
                    rx_st <= 3'd2;
                end
            end
            default: rx_st <= 3'd0;
        endcase
    end
end
// Fields this increment does not use (responses, mailbox, ERRQ come next).
wire unused_rx = &{1'b0, x_wtmp[3:0], mw_lo16[9:5], mw_hi16[9:5], mw_mhi[16], mw_mlo[16], mw_addr[3:0],
                   header_unpack$fpga_offset, header_unpack$path, header_unpack$reserved, header_unpack$vc,
                   header_unpack$ecc_reserved, footer_unpack$crc8, footer_unpack$user, footer_unpack$ttl,
                   m_bresp, x_end[43:42], mw_sh[255:128], footer_unpack$flags[7:4], k_t[13:@SA@],
                   // Packets are framed by their tails (a packet is the words
                   // after the previous tail), so the head flag is redundant;
                   // the receive-side header decode serves the CRC byte count.
                   in_head, header_rx$fpga_offset, header_rx$path, header_rx$reserved, header_rx$vc,
                   header_rx$ecc_reserved, header_rx$vaddr, header_rx$ptype, header_rx$dest, header_rx$pdid,
                   header_rx$single_err, header_rx$double_err, header_rx$ptype_known};
"#;

/// Index bits of the landing queue: up to `2^LQA` accepted data packets'
/// writes in flight (decided, B not yet taken).
const LQA: usize = 3;

/// `name` (`width` bits) as a `bits`-bit expression: zero-extended or
/// truncated (the value always fits).
fn fit(name: &str, width: usize, bits: usize) -> String {
    if bits > width {
        format!("{{{}'d0, {name}}}", bits - width)
    } else {
        format!("{name}[{}:0]", bits - 1)
    }
}

/// The Verilog of the receive path.
pub fn verilog(g: &Geometry) -> Result<String> {
    let n = &g.p.ni;
    let rxn = 1usize << g.rxa;
    let q = |name, width, abits, depth| Queue {
        name,
        width,
        abits,
        depth,
    };
    let eq = q("eq", 119, g.eqa, n.errq_depth);
    let cq = q("cq", 60, g.cqa, n.cq_depth);
    let rq = q("rq", 65, g.rqa, n.resp_queue_depth);
    let rd = q("rd", 169, g.rda, n.read_queue_depth);
    let mb = q("mb", 47, g.mba, n.mailbox_depth);
    let pm = q("pm", g.rxa + 33, g.rxa, rxn);
    let r1n = super::rx_class1_flits(n.max_payload_bytes);
    let r1a = r1n.trailing_zeros() as usize;
    let pn = q("pn", g.rxa + 33, r1a, r1n);
    let lq = q("lq", 127, LQA, 1 << LQA);
    let four = [&cq, &rq, &rd, &mb];
    let local = vec![
        ("RXNM1", (rxn - 1).to_string()),
        ("RXA", g.rxa.to_string()),
        ("RXA1", (g.rxa + 1).to_string()),
        ("RXA32", (g.rxa + 32).to_string()),
        ("PMW", (g.rxa + 1).to_string()),
        ("RXNPAD", pad(11 - (g.rxa + 1))),
        ("RVPAD", pad(10 - (g.rxa + 1))),
        ("CQPAD", pad(16 - (g.cqa + 1))),
        ("RQPAD", pad(16 - (g.rqa + 1))),
        ("LQD", (1usize << LQA).to_string()),
        ("MBKX", fit("mb_k", 5, g.rxa)),
        ("MWKX", fit("mw_k", 5, g.rxa)),
        ("PMQUEUE", pm.decl_mem() + &pm.decl_ptrs()),
        ("PNQUEUE", pn.decl_mem() + &pn.decl_ptrs()),
        ("PNRESET", pn.reset()),
        ("PNUPDATE", pn.update()),
        ("PNW", (r1a + 1).to_string()),
        ("R1NM1", (r1n - 1).to_string()),
        ("R1A", r1a.to_string()),
        ("R1AM1", (r1a - 1).to_string()),
        ("LQQUEUE", lq.decl_mem() + &lq.decl_ptrs()),
        ("PMRESET", pm.reset()),
        ("PMUPDATE", pm.update()),
        ("LQRESET", lq.reset()),
        ("LQUPDATE", lq.update()),
        ("EQW", (g.eqa + 1).to_string()),
        ("EQD", n.errq_depth.to_string()),
        ("RXAM1", (g.rxa - 1).to_string()),
        ("MBNM1", ((1usize << g.mba) - 1).to_string()),
        ("MBWNM1", ((1usize << (g.mba + g.mbwa)) - 1).to_string()),
        ("MBW", (g.mba + 1).to_string()),
        ("CQW", (g.cqa + 1).to_string()),
        ("RQW", (g.rqa + 1).to_string()),
        ("KIW", (g.cw + g.sa - 1).to_string()),
        ("MBWAP3", (g.mbwa + 3).to_string()),
        ("LIM", format!("{:x}", 1u64 << n.addr_bits)),
        ("PMODPAD", pad(10 - g.pa)),
        ("EQQUEUE", eq.decl_mem() + &eq.decl_ptrs()),
        ("CQQUEUE", cq.decl_mem() + &cq.decl_ptrs()),
        ("RQQUEUE", rq.decl_mem() + &rq.decl_ptrs()),
        ("RDQUEUE", rd.decl_mem() + &rd.decl_ptrs()),
        ("MBPTRS", mb.decl_ptrs()),
        ("EQRESET", eq.reset()),
        ("EQUPDATE", eq.update()),
        ("QRESET", four.iter().map(|q| q.reset()).collect()),
        ("QUPDATE", four.iter().map(|q| q.update()).collect()),
    ];
    let with = |extra: Vec<(&'static str, String)>| [local.clone(), extra].concat();
    let mut tkhit = String::new();
    for i in 0..n.poison_depth {
        let _ = writeln!(
            tkhit,
            "    tk_h[{i}] = tk_v[{i}] && (tk_key[{i}] == {{footer_unpack$src, footer_unpack$txid}});"
        );
    }
    let mut klookup = String::new();
    for c in 0..g.c {
        let lo = c * g.s;
        let hi = (c + 1) * g.s;
        let lo_cond = if c == 0 {
            String::new()
        } else {
            format!("(footer_unpack$txid >= 14'd{lo}) && ")
        };
        let _ = writeln!(
            klookup,
            "    if ({lo_cond}(footer_unpack$txid < 14'd{hi})) begin k_ok = 1'b1; k_c = {}; k_t = footer_unpack$txid - 14'd{lo}; end",
            Geometry::lit(g.cw, c)
        );
    }
    let mut s = g.fill_with(DECL, &with(vec![("TKHIT", tkhit), ("KLOOKUP", klookup)]))?;
    // Protection: some enabled window holds [vaddr, vaddr + size); one with
    // the packet's PDID.
    s.push_str("    x_hold = 1'b0;\n    x_pd = 1'b0;\n");
    for w in 0..g.win {
        let i = Geometry::lit(g.wa, w);
        let _ = writeln!(
            s,
            "    if (win_en[{i}] && (header_unpack$vaddr >= {{win_base_hi[{i}], win_base_lo[{i}]}})\n        && ({{1'b0, x_end}} <= {{2'd0, win_base_hi[{i}], win_base_lo[{i}]}} + {{2'd0, win_size_hi[{i}], win_size_lo[{i}]}})) begin\n        x_hold = 1'b1;\n        if (win_pdid[{i}] == header_unpack$pdid) x_pd = 1'b1;\n    end"
        );
    }
    let mut rej = String::new();
    for r in 0..16 {
        let _ = writeln!(rej, "        rej_cnt[{r}] <= 32'd0;");
    }
    let mut tkkey = String::new();
    for i in 0..n.poison_depth {
        let _ = writeln!(
            tkkey,
            "    if (tk_set && tk_f1[{i}]) tk_key[{i}] <= {{footer_unpack$src, footer_unpack$txid}};"
        );
    }
    s.push_str(&g.fill_with(DECIDE, &with(vec![("REJRESET", rej), ("TKKEY", tkkey)]))?);
    Ok(s)
}
