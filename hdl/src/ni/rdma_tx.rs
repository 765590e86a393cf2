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
//!    meanwhile.
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
//! `tx_ahead` ([`NiRtlParams::tx_ahead`](super::top::NiRtlParams::tx_ahead),
//! config key `ni.tx_ahead`, default [`DEFAULT_TX_AHEAD`]): packets the
//! scheduler may have picked and not yet sent, the depth of the packet and
//! read-job queues. It trades LUTRAM (two queues of `tx_ahead` entries; a
//! packet record is about 210 bits) for the memory latency the transmit
//! side hides. RTL only: every pick is still the golden model's `emit_packet`
//! instant, so the golden model does not depend on it (`tx_busy` tells the
//! bench when the RTL cannot pick).

use super::top::Geometry;
use super::vgen::{pad, Queue, Record};
use anyhow::Result;
use std::fmt::Write as _;

/// Default `tx_ahead`: packets the scheduler may have picked and not yet
/// sent (the packet queue's entries), i.e. how far the AXI4 reads run
/// ahead: 8 covers about 116 cycles of memory latency at full rate.
pub const DEFAULT_TX_AHEAD: usize = 8;

/// Supported `tx_ahead`: powers of two (the queue pointers wrap by
/// overflow) from 2 (a 1-entry queue would have 0-bit pointers) to 32 (still
/// two bits per LUT as RAM32M; it hides 18·31 - 10 = 548 cycles of memory
/// latency, 3.5 µs at 156.25 MHz, and deeper queues only cost LUTRAM).
pub const TX_AHEAD_RANGE: std::ops::RangeInclusive<usize> = 2..=32;

const DECL: &str = r#"
// ===================== rdma_tx =====================
// Scheduler: LOAD in the cycle after a pick; the record is appended to the
// packet queue in the cycle after LOAD.
reg        f_load;
reg        f_push;
reg [@CWM1@:0] rr;
reg        e_msg;
reg        e_rd;
reg [31:0] tx_packets;
reg [31:0] tx_bytes;
reg        act [0:@NCM1@];
reg [@ABM1@:0] cur_src [0:@NCM1@];
reg [41:0] cur_land [0:@NCM1@];
reg [31:0] cur_rem [0:@NCM1@];
reg [13:0] cur_seq [0:@NCM1@];
// Read-serve engine: the head request's transfer state.
reg        rs_act;
reg [@ABM1@:0] rs_src;
reg [41:0] rs_land;
reg [31:0] rs_rem;
reg [13:0] rs_seq;
// Response lane: the footer goes next (`rl_ftr`); resp_vc credits used.
reg        rl_st;
reg [127:0] rl_ftr;
reg [@CRWM1@:0] rcr_used;
reg        ol_q;
// Sender: 0 header next, 1 payload, 2 footer.
reg  [1:0] b_st;
reg  [4:0] jp;
reg  [4:0] js;
reg        word_v;
reg [127:0] word_q;
reg [31:0] crc_q;
reg [@CRWM1@:0] cr_used;
reg        ov_q;
reg        oh_q;
reg        ot_q;
reg [127:0] od_q;
// Realigner: words pushed and beats taken for the head read job.
reg  [4:0] rjp;
reg  [4:0] rb;
reg [127:0] prev;

// Pick: round-robin over channels with work.
reg [@CM1@:0] rdy;
reg hi_v;
reg lo_v;
reg [@CWM1@:0] hi_c;
reg [@CWM1@:0] lo_c;
reg pick_now;
reg pick_rd;
reg [@CWM1@:0] pick_c;
reg cand_msg;
reg mq_room;
reg be_empty;
reg can_pick;
reg eng_load;
"#;

const LOAD: &str = r#"
// Load: the picked channel's next packet.
reg [169:0] dq_rd;
reg [41:0] d_laddr;
reg [41:0] d_raddr;
reg [31:0] d_len;
reg [21:0] d_dest;
reg        d_op;
reg        d_notify;
reg [13:0] d_txid;
reg [15:0] d_pdid;
reg [168:0] rd_e;
reg        l_act;
reg [@ABM1@:0] l_src;
reg [41:0] l_land;
reg [31:0] l_rem;
reg [13:0] l_seq;
reg  [8:0] l_room;
reg  [8:0] l_n;
reg        l_last;
reg  [8:0] l_btmp;
reg  [4:0] l_beats;
reg  [8:0] l_topage;
reg        l_split;
reg  [8:0] l_size;
reg  [8:0] l_wtmp;
reg        l_data;
reg        dq_pop;
reg        rd_pop;
reg        pq_pop;
always @(*) begin
    dq_rd = dq_mem[{e_c, dq_head[e_c]}];
    d_laddr = dq_rd[41:0];
    d_raddr = dq_rd[83:42];
    d_len = dq_rd[115:84];
    d_dest = dq_rd[137:116];
    d_op = dq_rd[138];
    d_notify = dq_rd[139];
    d_txid = dq_rd[153:140];
    d_pdid = dq_rd[169:154];
    rd_e = rd_mem[rd_head];
    // A read response streams like a write, from the read queue's head.
    if (e_rd) begin
        l_act = rs_act;
        l_src = rs_act ? rs_src : rd_e[@ABM1@:0];
        l_land = rs_act ? rs_land : rd_e[83:42];
        l_rem = rs_act ? rs_rem : rd_e[115:84];
        l_seq = rs_act ? rs_seq : 14'd0;
    end else begin
        l_act = act[e_c];
        l_src = l_act ? cur_src[e_c] : d_laddr[@ABM1@:0];
        l_land = l_act ? cur_land[e_c] : d_raddr;
        l_rem = l_act ? cur_rem[e_c] : d_len;
        l_seq = l_act ? cur_seq[e_c] : 14'd0;
    end
    l_room = 9'd@P@ - {@ROOMPAD@l_land[@PAM1@:0]};
    l_n = (l_rem < {23'd0, l_room}) ? l_rem[8:0] : l_room;
    l_last = (l_rem == {23'd0, l_n});
    l_btmp = {5'd0, l_src[3:0]} + l_n + 9'd15;
    l_beats = l_btmp[8:4];
    l_topage = 9'd256 - {1'b0, l_src[11:4]};
    l_split = ({4'd0, l_beats} > l_topage);
    l_size = e_msg ? ps_len[{e_c, pq_slot}] : ((d_op && !e_rd) ? 9'd16 : l_n);
    l_wtmp = l_size + 9'd15;
    // A packet whose payload is read from memory (write, read response).
    l_data = !e_msg && (e_rd || !d_op);
    dq_pop = eng_load && !e_msg && !e_rd && (d_op || l_last);
    rd_pop = eng_load && e_rd && l_last;
    pq_pop = eng_load && e_msg;
    rj_push = eng_load && l_data;
end
"#;

const SENDER: &str = r#"
// Sender: flit sends and credits over the packet queue's head.
reg        head_v;
reg  [8:0] b_wtmp;
reg  [4:0] b_words;
reg  [4:0] b_lastb;
reg credit_ok;
reg hdr_send;
reg pay_send;
reg ftr_send;
reg send_now;
reg cr_ret;
reg rsp_go;
reg rl_send;
reg rcr_ret;
always @(*) begin
    head_v = (mq_count != @MQW@'d0) || f_push;
    b_wtmp = b_size + 9'd15;
    b_words = b_wtmp[8:4];
    b_lastb = (b_size[3:0] == 4'd0) ? 5'd16 : {1'b0, b_size[3:0]};
    credit_ok = (cr_used != @CRW@'d@BUF@);
    // Response lane (class 1, `resp_vc`): the response queue's head, two
    // flits in consecutive cycles, started with both credits in hand. Its
    // flits go first, between any two class-0 flits (the link carries the
    // VCs interleaved; each VC's packets stay whole): a class-0 packet
    // stalled mid-way for credits of its VC never holds a response back.
    rsp_go = !rl_st && (rq_count != @RQW@'d0) && (rcr_used <= @CRW@'d@BUFM2@) && !reset;
    rl_send = rsp_go || rl_st;
    rcr_ret = credit_in_valid && (credit_in_vc == 4'd@RVC@) && ((rcr_used != @CRW@'d0) || rl_send);
    hdr_send = (b_st == 2'd0) && head_v && credit_ok && !rl_send;
    pay_send = (b_st == 2'd1) && word_v && credit_ok && !rl_send;
    ftr_send = (b_st == 2'd2) && credit_ok && !rl_send;
    send_now = hdr_send || pay_send || ftr_send;
    cr_ret = credit_in_valid && (credit_in_vc == 4'd@VC@) && ((cr_used != @CRW@'d0) || send_now);
    mq_push = f_push;
    mq_pop = ftr_send;
end

// Realigner: AXI4 R beats of the head read job into the payload FIFO.
reg [13:0] rj_rd;
reg  [3:0] e_shift;
reg  [4:0] e_beats;
reg  [4:0] r_words;
reg        r_on;
reg        pf_room;
reg        r_take;
reg        r_done;
reg        r_push;
reg [127:0] pf_word;
reg  [6:0] sh;
always @(*) begin
    rj_rd = rj_mem[rj_head];
    e_shift = rj_rd[13:10];
    e_beats = rj_rd[9:5];
    r_words = rj_rd[4:0];
    r_on = (rj_count != @MQW@'d0);
    pf_room = (pf_count != @PFW@'d@PFD@);
    sh = {e_shift, 3'd0};
    m_rready = 1'b0;
    r_take = 1'b0;
    r_push = 1'b0;
    pf_word = m_rdata;
    if (e_shift == 4'd0) begin
        m_rready = r_on && pf_room;
        r_take = m_rready && m_rvalid;
        r_push = r_take;
    end else if (rb == 5'd0) begin
        // Priming beat of an unaligned source.
        m_rready = r_on;
        r_take = m_rready && m_rvalid;
    end else if (rb != e_beats) begin
        m_rready = r_on && pf_room;
        r_take = m_rready && m_rvalid;
        r_push = r_take;
        pf_word = (prev >> sh) | (m_rdata << (8'd128 - {1'b0, sh}));
    end else begin
        r_push = r_on && pf_room;
        pf_word = prev >> sh;
    end
    r_done = r_push && (rjp == r_words - 5'd1);
    rj_pop = r_done;
end

// Payload words into word_q: message slot, read request, or payload FIFO.
reg        prod_on;
reg        prod_room;
reg        prod_fire;
reg [127:0] prod_word;
reg [127:0] prod_mask;
reg  [4:0] vb;
reg        pf_empty;
always @(*) begin
    prod_on = (((b_st == 2'd0) && head_v) || (b_st == 2'd1)) && (jp != b_words);
    prod_room = !word_v || pay_send;
    pf_pop = 1'b0;
    pf_empty = (pf_count == @PFW@'d0);
    case (b_kind)
        2'd2: begin
            prod_fire = prod_on && prod_room;
            prod_word = msg_word;
        end
        2'd1: begin
            prod_fire = prod_on && prod_room;
            prod_word = {32'd0, b_rrlen, 22'd0, b_rrladdr};
        end
        default: begin
            // From the FIFO; when it is empty, the realigner's word of this
            // cycle (the head packet's: the FIFO holds no earlier word).
            prod_fire = prod_on && prod_room && (pf_empty ? r_push : 1'b1);
            prod_word = pf_empty ? pf_word : pf_mem[pf_head];
            pf_pop = prod_fire && !pf_empty;
        end
    endcase
    pf_push = r_push && !(prod_fire && pf_empty && (b_kind == 2'd0));
    vb = (jp == b_words - 5'd1) ? b_lastb : 5'd16;
    prod_mask = {128{1'b1}} >> {5'd16 - vb, 3'd0};
end

// Children: header (SECDED), footer (CRC-8), payload CRC-32.
always @(*) begin
    header_pack$fpga_offset = 2'd0;
    header_pack$path = 3'd0;
    header_pack$reserved = 3'd0;
    header_pack$vaddr = b_vaddr;
    header_pack$size = {5'd0, b_size};
    header_pack$ptype = b_ptype;
    header_pack$dest = b_dest;
    header_pack$pdid = b_pdid;
    header_pack$vc = 5'd0;
    footer_pack$payload_crc = crc_q;
    footer_pack$user = 12'd0;
    footer_pack$ttl = 15'd0;
    footer_pack$seq = b_seq;
    footer_pack$notify = b_notify;
    footer_pack$last = b_last;
    footer_pack$first = b_first;
    // Class-0 packets carry no flags (responses leave by the lane).
    footer_pack$flags = 8'd0;
    footer_pack$src = node;
    footer_pack$txid = b_txid;
    crc32$clock = clock;
    crc32$reset = reset;
    crc32$start = hdr_send;
    crc32$valid = pay_send;
    crc32$data = word_q;
    crc32$bytes = (js == b_words - 5'd1) ? b_lastb : 5'd16;
end

// The response lane's header and footer, from the response queue's head
// {flags, txid, pdid, dest, ptype}: no payload, first = last = 1.
always @(*) begin
    rsp_hdr$fpga_offset = 2'd0;
    rsp_hdr$path = 3'd0;
    rsp_hdr$reserved = 3'd0;
    rsp_hdr$vaddr = 42'd0;
    rsp_hdr$size = 14'd0;
    rsp_hdr$ptype = rq_rd[4:0];
    rsp_hdr$dest = rq_rd[26:5];
    rsp_hdr$pdid = rq_rd[42:27];
    rsp_hdr$vc = 5'd0;
    rsp_ftr$payload_crc = 32'd0;
    rsp_ftr$user = 12'd0;
    rsp_ftr$ttl = 15'd0;
    rsp_ftr$seq = 14'd0;
    rsp_ftr$notify = 1'b0;
    rsp_ftr$last = 1'b1;
    rsp_ftr$first = 1'b1;
    rsp_ftr$flags = rq_rd[64:57];
    rsp_ftr$src = node;
    rsp_ftr$txid = rq_rd[56:43];
end

always @(*) begin
    out_valid = ov_q;
    out_data = od_q;
    out_head = oh_q;
    out_tail = ot_q;
    out_vc = ol_q ? 4'd@RVC@ : 4'd@VC@;
    rsp_pick = rsp_go;
    tx_pick = pick_now;
    tx_busy = !can_pick;
end
"#;

const SEQ_LOAD: &str = r#"
always @(posedge clock) begin
    if (reset) begin
        f_load <= 1'b0;
        f_push <= 1'b0;
        rr <= @CW@'d0;
        e_c <= @CW@'d0;
        e_msg <= 1'b0;
        e_rd <= 1'b0;
        rs_act <= 1'b0;
        tx_packets <= 32'd0;
        tx_bytes <= 32'd0;
@ACTRESET@    end else begin
        f_load <= pick_now;
        f_push <= f_load;
        if (pick_now) begin
            e_rd <= pick_rd;
            if (pick_rd) e_msg <= 1'b0;
            else begin
                e_c <= pick_c;
                e_msg <= (pq_count[pick_c] != @SW@'d0);
                rr <= (pick_c == @CW@'d@CM1@) ? @CW@'d0 : pick_c + @CW@'d1;
            end
        end
        // TX_PACKETS counts every packet at its pick (the lane's included).
        tx_packets <= tx_packets + {31'd0, f_load} + {31'd0, rsp_go};
        if (f_load) begin
            e_size <= l_size;
            tx_bytes <= tx_bytes + {23'd0, l_size};
@BRANCHES@        end
    end
end
"#;

const SEQ_SEND: &str = r#"
always @(posedge clock) begin
    if (reset) begin
        b_st <= 2'd0;
        jp <= 5'd0;
        js <= 5'd0;
        word_v <= 1'b0;
        cr_used <= @CRW@'d0;
        ov_q <= 1'b0;
        oh_q <= 1'b0;
        ot_q <= 1'b0;
        ol_q <= 1'b0;
        rl_st <= 1'b0;
        rcr_used <= @CRW@'d0;
        rjp <= 5'd0;
        rb <= 5'd0;
@QRESET@    end else begin
@QUPDATE@        cr_used <= cr_used + {@CRWM1@'d0, send_now} - {@CRWM1@'d0, cr_ret};
        rcr_used <= rcr_used + {@CRWM1@'d0, rl_send} - {@CRWM1@'d0, rcr_ret};
        ov_q <= send_now || rl_send;
        oh_q <= hdr_send || rsp_go;
        ot_q <= ftr_send || rl_st;
        ol_q <= rl_send;
        if (send_now) od_q <= hdr_send ? header_pack$word : (pay_send ? word_q : footer_pack$word);
        else if (rsp_go) od_q <= rsp_hdr$word;
        else if (rl_st) od_q <= rl_ftr;
        rl_st <= rsp_go;
        if (rsp_go) rl_ftr <= rsp_ftr$word;
        case (b_st)
            2'd0: if (hdr_send) begin
                // No payload: straight to the footer, payload CRC 0.
                if (b_words == 5'd0) begin
                    b_st <= 2'd2;
                    crc_q <= 32'd0;
                end else b_st <= 2'd1;
            end
            2'd1: if (pay_send && (js == b_words - 5'd1)) begin
                b_st <= 2'd2;
                crc_q <= crc32$crc;
            end
            default: if (ftr_send) begin
                b_st <= 2'd0;
                jp <= 5'd0;
                js <= 5'd0;
            end
        endcase
        if (prod_fire) begin
            word_q <= prod_word & prod_mask;
            jp <= jp + 5'd1;
        end
        if (prod_fire) word_v <= 1'b1;
        else if (pay_send) word_v <= 1'b0;
        if (pay_send) js <= js + 5'd1;
        // Realigner.
        if (r_take) begin
            prev <= m_rdata;
            rb <= rb + 5'd1;
        end
        if (r_push) rjp <= rjp + 5'd1;
        if (r_done) begin
            rjp <= 5'd0;
            rb <= 5'd0;
        end
    end
end
always @(posedge clock) begin
    if (f_push) mq_mem[mq_tail] <= e_rec;
    if (rj_push) rj_mem[rj_tail] <= {l_src[3:0], l_beats, l_wtmp[8:4]};
    if (pf_push) pf_mem[pf_tail] <= pf_word;
end
// Bits the datapath does not need.
wire unused_tx = &{1'b0, l_btmp[3:0], l_wtmp[3:0], b_wtmp[3:0]@RDUNUSED@};
"#;

/// The packet record from the load to the sender (most significant first).
fn record(g: &Geometry) -> Record {
    Record {
        fields: vec![
            // 0 data (payload from the FIFO), 1 read request (payload
            // `rrlen`/`rrladdr`), 2 message (payload from slot `slot` of
            // channel `c`).
            ("kind", 2),
            ("ptype", 5),
            ("vaddr", 42),
            ("size", 9),
            ("dest", 22),
            ("pdid", 16),
            ("seq", 14),
            ("txid", 14),
            ("first", 1),
            ("last", 1),
            ("notify", 1),
            ("c", g.cw),
            ("slot", g.sa),
            ("rrlen", 32),
            ("rrladdr", 42),
        ],
    }
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

/// Record assignments `e_<field> <= <value>;` of one kind of packet, at
/// `indent`.
fn assign(fields: &[(&str, &str)], indent: &str) -> String {
    fields
        .iter()
        .map(|(f, v)| format!("{indent}e_{f} <= {v};\n"))
        .collect()
}

/// The LOAD branches: the record of each kind of packet.
fn load_branches(g: &Geometry) -> String {
    let i = " ".repeat(16);
    let txid = format!("msg_base + {{{}pq_slot}}", pad(14 - g.sa));
    let msg = assign(
        &[
            ("kind", "2'd2"),
            ("ptype", "5'd3"),
            ("vaddr", "42'd0"),
            ("dest", "ps_dest[{e_c, pq_slot}]"),
            ("pdid", "ps_pdid[{e_c, pq_slot}]"),
            ("seq", "14'd0"),
            ("first", "1'b1"),
            ("last", "1'b1"),
            ("notify", "1'b0"),
            ("txid", &txid),
            ("slot", "pq_slot"),
        ],
        &i,
    );
    let rreq = assign(
        &[
            ("kind", "2'd1"),
            ("ptype", "5'd2"),
            ("vaddr", "d_raddr"),
            ("dest", "d_dest"),
            ("pdid", "d_pdid"),
            ("seq", "14'd0"),
            ("first", "1'b1"),
            ("last", "1'b1"),
            ("notify", "d_notify"),
            ("txid", "d_txid"),
            ("rrlen", "d_len"),
            ("rrladdr", "d_laddr"),
        ],
        &i,
    );
    let data = assign(
        &[
            ("kind", "2'd0"),
            ("ptype", "e_rd ? 5'h10 : 5'h01"),
            ("vaddr", "l_land"),
            ("dest", "e_rd ? rd_e[137:116] : d_dest"),
            ("pdid", "e_rd ? rd_e[153:138] : d_pdid"),
            ("seq", "l_seq"),
            ("first", "!l_act"),
            ("last", "l_last"),
            ("notify", "e_rd ? rd_e[168] : d_notify"),
            ("txid", "e_rd ? rd_e[167:154] : d_txid"),
        ],
        &i,
    );
    // The transfer state after this packet (read-serve or channel).
    let src_pad = pad(g.p.ni.addr_bits as usize - 9);
    let advance = |prefix: &str, idx: &str| {
        format!(
            "{i}    {prefix}_src{idx} <= l_src + {{{src_pad}l_n}};\n\
             {i}    {prefix}_land{idx} <= l_land + {{33'd0, l_n}};\n\
             {i}    {prefix}_rem{idx} <= l_rem - {{23'd0, l_n}};\n\
             {i}    {prefix}_seq{idx} <= l_seq + 14'd1;\n"
        )
    };
    format!(
        "            if (e_msg) begin\n{msg}\
         \x20           end else if (d_op && !e_rd) begin\n{rreq}\
         \x20           end else begin\n{data}\
         {i}if (e_rd) begin\n{i}    rs_act <= !l_last;\n{}\
         {i}end else if (l_last) act[e_c] <= 1'b0;\n{i}else begin\n{i}    act[e_c] <= 1'b1;\n{}\
         {i}end\n            end\n",
        advance("rs", ""),
        advance("cur", "[e_c]")
    )
}

/// The ready bits, the round-robin pick and whether the scheduler can pick.
fn pick(g: &Geometry) -> String {
    let nc = 1usize << g.cw;
    let mut s = String::from("always @(*) begin\n");
    for c in 0..g.c {
        let cl = Geometry::lit(g.cw, c);
        let _ = writeln!(
            s,
            "    rdy[{c}] = (pq_count[{cl}] != {}'d0) || (dq_count[{cl}] != {}'d0);",
            g.sa + 1,
            g.dqa + 1
        );
    }
    let _ = writeln!(
        s,
        "    hi_v = 1'b0;\n    lo_v = 1'b0;\n    hi_c = {0}'d0;\n    lo_c = {0}'d0;",
        g.cw
    );
    // The first ready channel at or after the pointer (hi), else the first
    // ready one (lo): scanned from the top so the lowest wins.
    for c in (0..g.c).rev() {
        let cl = Geometry::lit(g.cw, c);
        let at_or_after = if c == 0 {
            format!("(rr == {cl})")
        } else if c == nc - 1 {
            "1'b1".to_string()
        } else {
            format!("(rr <= {cl})")
        };
        let _ = writeln!(
            s,
            "    if (rdy[{c}] && {at_or_after}) begin hi_v = 1'b1; hi_c = {cl}; end"
        );
    }
    for c in (0..g.c).rev() {
        let cl = Geometry::lit(g.cw, c);
        let _ = writeln!(s, "    if (rdy[{c}]) begin lo_v = 1'b1; lo_c = {cl}; end");
    }
    s.push_str(
        r#"    pick_rd = (rd_count != @RDW@'d0);
    pick_c = hi_v ? hi_c : lo_c;
    // A channel pick would take a message (sent from its slot as it leaves).
    cand_msg = !pick_rd && (pq_count[pick_c] != @SW@'d0);
    mq_room = ({1'b0, mq_count} + {@MQW@'d0, f_push}) < @MQW1@'d@MQD@;
    be_empty = (mq_count == @MQW@'d0) && !f_push;
    can_pick = !f_load && !ar_v && mq_room && (be_empty || !cand_msg);
    pick_now = can_pick && (pick_rd || (tx_en && lo_v)) && !reset;
    eng_load = f_load;
end
"#,
    );
    s
}

/// The packet record, its queue and the sender's view of the head: the
/// queue's head entry, or the record being appended while the queue is
/// empty.
fn record_path(g: &Geometry, mq: &Queue) -> String {
    let r = record(g);
    let w = r.width();
    let mut s = String::from("// The packet record: e_* as loaded, b_* the sender's head.\n");
    s.push_str(&r.decl("e_"));
    s.push_str(&r.decl("b_"));
    let _ = writeln!(s, "reg [{}:0] e_rec;\nreg [{}:0] b_rec;", w - 1, w - 1);
    s.push_str(&mq.decl_mem());
    let _ = write!(
        s,
        "always @(*) begin\n    e_rec = {{{}}};\n    b_rec = (mq_count != {}'d0) ? mq_mem[mq_head] : e_rec;\n{}end\n",
        r.concat("e_"),
        mq.abits + 1,
        r.unpack("b_", "b_rec")
    );
    s
}

/// The Verilog of the transmit engine.
pub fn verilog(g: &Geometry) -> Result<String> {
    let n = &g.p.ni;
    let nc = 1usize << g.cw;
    let [mq, rj, pf] = queues(g);
    let local = [
        ("CM1", (g.c - 1).to_string()),
        ("ROOMPAD", pad(9 - g.pa)),
        ("MQW", (mq.abits + 1).to_string()),
        ("MQW1", (mq.abits + 2).to_string()),
        ("MQD", mq.depth.to_string()),
        ("PFW", (pf.abits + 1).to_string()),
        ("PFD", pf.depth.to_string()),
        ("RQW", (g.rqa + 1).to_string()),
        ("RDW", (g.rda + 1).to_string()),
        ("BUFM2", (g.p.buffer_flits - 2).to_string()),
    ];
    let mut s = g.fill_with(DECL, &local)?;
    for q in [&mq, &rj, &pf] {
        s.push_str(&q.decl_ptrs());
        let _ = writeln!(s, "reg        {0}_push;\nreg        {0}_pop;", q.name);
    }
    s.push_str(&rj.decl_mem());
    s.push_str(&pf.decl_mem());
    s.push_str(&record_path(g, &mq));
    s.push_str(&g.fill_with(&pick(g), &local)?);
    s.push_str(&g.fill_with(LOAD, &local)?);
    // Message txid base of the picked channel.
    s.push_str("reg [13:0] msg_base;\nalways @(*) begin\n    case (e_c)\n");
    for c in 0..g.c {
        let _ = writeln!(
            s,
            "        {}: msg_base = 14'd{};",
            Geometry::lit(g.cw, c),
            c * g.s
        );
    }
    s.push_str("        default: msg_base = 14'd0;\n    endcase\nend\n");
    s.push_str(&g.fill_with(SENDER, &local)?);
    let mut act = String::new();
    for c in 0..nc {
        let _ = writeln!(act, "        act[{}] <= 1'b0;", Geometry::lit(g.cw, c));
    }
    let with = |extra: Vec<(&'static str, String)>| [local.to_vec(), extra].concat();
    s.push_str(&g.fill_with(
        SEQ_LOAD,
        &with(vec![("ACTRESET", act), ("BRANCHES", load_branches(g))]),
    )?);
    // Source-address bits of a read request above `addr_bits` (always 0
    // in an accepted request: the range check bounds it).
    let rd_unused = if n.addr_bits < 42 {
        format!(", rd_e[41:{}]", n.addr_bits)
    } else {
        String::new()
    };
    let q = [&mq, &rj, &pf];
    s.push_str(&g.fill_with(
        SEQ_SEND,
        &with(vec![
            ("QRESET", q.iter().map(|q| q.reset()).collect()),
            ("QUPDATE", q.iter().map(|q| q.update()).collect()),
            ("RDUNUSED", rd_unused),
        ]),
    )?);
    Ok(s)
}
