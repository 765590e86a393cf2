//! `rdma_tx`: the transmit scheduler, segmentation, payload datapath and
//! flit output with credits (generated Verilog, part of the `ni` top).
//!
//! States: IDLE → (pick) LOAD → HDR → PAY → FTR → IDLE, one packet at a
//! time.
//! - **Pick** (IDLE, `tx_pick`): the head of the response queue if any
//!   (priority 1, whatever TX_ENABLE; the pointer does not move); else the
//!   read-serve engine's next packet when the read queue holds a job
//!   (priority 2, whatever TX_ENABLE; the pointer does not move); else,
//!   when TX_ENABLE and a channel has a queued message or descriptor, the
//!   first such channel at or after the round-robin pointer; a queued
//!   message before the head descriptor. The pointer moves past the
//!   picked channel.
//! - **Load**: the packet's header/footer fields. A response: type, dest,
//!   PDID, txid and flags from the queue entry (popped), no payload (HDR →
//!   FTR, payload CRC 0). A message: its slot (the
//!   send-queue head, popped; slot → awaiting ack), txid `c·pkt_slots +
//!   slot`. A read descriptor: the request packet (payload `{32'd0, len,
//!   22'd0, local}` = landing address and length, little-endian), popped.
//!   A write: the channel's transfer state (source, landing address,
//!   remaining, seq; from the descriptor when the transfer starts), `n =
//!   min(P - land mod P, remaining)` bytes; the descriptor is popped with
//!   its last packet. A read response: the same, from the read-serve
//!   state (`rs_*`, from the read queue's head job when it starts; type
//!   RdmaReadResp, requester, PDID, txid, notify of the request); the job
//!   is popped with its last packet. The AXI read of the packet's source
//!   bytes starts ([`super::axi_master`]).
//! - **HDR / PAY / FTR**: one flit per cycle when the credit counter
//!   allows. Payload words pass through `word_q` (one register stage):
//!   a write's words are realigned from 16-byte beats (`{beat k+1, beat
//!   k} >> 8·(src mod 16)`, one priming beat when unaligned); bytes past
//!   the packet's size are zeroed. `Crc32` runs over the payload flits as
//!   they leave; its result is latched for the footer.
//!
//! Latency: pick in cycle t, header on `out_*` at t+3 at the earliest
//! (LOAD t+1, HDR send t+2, output register).

use super::top::Geometry;
use anyhow::Result;
use std::fmt::Write as _;

const DECL: &str = r#"
// ===================== rdma_tx =====================
reg  [2:0] state;
reg [@CWM1@:0] rr;
reg [@CWM1@:0] e_c;
reg        e_msg;
reg        e_rsp;
reg        e_rd;
reg  [7:0] e_flags;
reg  [1:0] e_kind;
reg  [4:0] e_ptype;
reg [41:0] e_vaddr;
reg  [8:0] e_size;
reg [21:0] e_dest;
reg [15:0] e_pdid;
reg [13:0] e_seq;
reg [13:0] e_txid;
reg        e_first;
reg        e_last;
reg        e_notify;
reg  [4:0] e_words;
reg  [4:0] e_lastb;
reg [127:0] e_rrword;
reg [@SAM1@:0] e_slot;
reg  [3:0] e_shift;
reg  [4:0] e_beats;
reg  [4:0] jp;
reg  [4:0] js;
reg  [4:0] rb;
reg        word_v;
reg [127:0] word_q;
reg [127:0] prev;
reg [31:0] crc_q;
reg [@CRWM1@:0] cr_used;
reg        ov_q;
reg        oh_q;
reg        ot_q;
reg [127:0] od_q;
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

// Pick: round-robin over channels with work.
reg [@CM1@:0] rdy;
reg hi_v;
reg lo_v;
reg [@CWM1@:0] hi_c;
reg [@CWM1@:0] lo_c;
reg pick_now;
reg pick_rsp;
reg pick_rd;
reg [@CWM1@:0] pick_c;
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
    l_size = e_rsp ? 9'd0 : (e_msg ? ps_len[{e_c, pq_slot}] : ((d_op && !e_rd) ? 9'd16 : l_n));
    l_wtmp = l_size + 9'd15;
    dq_pop = eng_load && !e_rsp && !e_msg && !e_rd && (d_op || l_last);
    rd_pop = eng_load && e_rd && l_last;
    pq_pop = eng_load && e_msg;
end
"#;

const DATAPATH: &str = r#"
// Flit sends and credits.
reg credit_ok;
reg hdr_send;
reg pay_send;
reg ftr_send;
reg send_now;
reg cr_ret;
always @(*) begin
    credit_ok = (cr_used != @CRW@'d@BUF@);
    hdr_send = (state == 3'd2) && credit_ok;
    pay_send = (state == 3'd3) && word_v && credit_ok;
    ftr_send = (state == 3'd4) && credit_ok;
    send_now = hdr_send || pay_send || ftr_send;
    cr_ret = credit_in_valid && (credit_in_vc == 4'd@VC@) && ((cr_used != @CRW@'d0) || send_now);
end

// Payload word producer: message slot, read request, or realigned AXI beats.
reg        prod_on;
reg        prod_room;
reg        prod_fire;
reg        r_take;
reg [127:0] prod_word;
reg [127:0] prod_mask;
reg  [4:0] vb;
reg  [6:0] sh;
always @(*) begin
    prod_on = ((state == 3'd2) || (state == 3'd3)) && (jp != e_words);
    prod_room = !word_v || pay_send;
    prod_fire = 1'b0;
    r_take = 1'b0;
    m_rready = 1'b0;
    prod_word = msg_word;
    sh = {e_shift, 3'd0};
    case (e_kind)
        2'd2: prod_fire = prod_on && prod_room;
        2'd1: begin
            prod_fire = prod_on && prod_room;
            prod_word = e_rrword;
        end
        default: begin
            if (e_shift == 4'd0) begin
                m_rready = prod_on && prod_room;
                r_take = m_rready && m_rvalid;
                prod_fire = r_take;
                prod_word = m_rdata;
            end else if (rb == 5'd0) begin
                m_rready = (state == 3'd2) || (state == 3'd3);
                r_take = m_rready && m_rvalid;
            end else if (rb != e_beats) begin
                m_rready = prod_on && prod_room;
                r_take = m_rready && m_rvalid;
                prod_fire = r_take;
                prod_word = (prev >> sh) | (m_rdata << (8'd128 - {1'b0, sh}));
            end else begin
                prod_fire = prod_on && prod_room;
                prod_word = prev >> sh;
            end
        end
    endcase
    vb = (jp == e_words - 5'd1) ? e_lastb : 5'd16;
    prod_mask = {128{1'b1}} >> {5'd16 - vb, 3'd0};
end

// Children: header (SECDED), footer (CRC-8), payload CRC-32.
always @(*) begin
    header_pack$fpga_offset = 2'd0;
    header_pack$path = 3'd0;
    header_pack$reserved = 3'd0;
    header_pack$vaddr = e_vaddr;
    header_pack$size = {5'd0, e_size};
    header_pack$ptype = e_ptype;
    header_pack$dest = e_dest;
    header_pack$pdid = e_pdid;
    header_pack$vc = 5'd0;
    footer_pack$payload_crc = crc_q;
    footer_pack$user = 12'd0;
    footer_pack$ttl = 15'd0;
    footer_pack$seq = e_seq;
    footer_pack$notify = e_notify;
    footer_pack$last = e_last;
    footer_pack$first = e_first;
    footer_pack$flags = e_flags;
    footer_pack$src = node;
    footer_pack$txid = e_txid;
    crc32$clock = clock;
    crc32$reset = reset;
    crc32$start = hdr_send;
    crc32$valid = pay_send;
    crc32$data = word_q;
    crc32$bytes = (js == e_words - 5'd1) ? e_lastb : 5'd16;
end

always @(*) begin
    out_valid = ov_q;
    out_data = od_q;
    out_head = oh_q;
    out_tail = ot_q;
    out_vc = 4'd@VC@;
    tx_pick = pick_now;
    tx_busy = (state != 3'd0);
end
"#;

const SEQ: &str = r#"
always @(posedge clock) begin
    if (reset) begin
        state <= 3'd0;
        rr <= @CW@'d0;
        e_c <= @CW@'d0;
        e_msg <= 1'b0;
        e_rsp <= 1'b0;
        e_rd <= 1'b0;
        rs_act <= 1'b0;
        word_v <= 1'b0;
        cr_used <= @CRW@'d0;
        ov_q <= 1'b0;
        oh_q <= 1'b0;
        ot_q <= 1'b0;
        tx_packets <= 32'd0;
        tx_bytes <= 32'd0;
@ACTRESET@    end else begin
        cr_used <= cr_used + {@CRWM1@'d0, send_now} - {@CRWM1@'d0, cr_ret};
        ov_q <= send_now;
        oh_q <= hdr_send;
        ot_q <= ftr_send;
        if (send_now) od_q <= hdr_send ? header_pack$word : (pay_send ? word_q : footer_pack$word);
        case (state)
            3'd0: if (pick_now) begin
                state <= 3'd1;
                e_rsp <= pick_rsp;
                e_rd <= !pick_rsp && pick_rd;
                if (pick_rsp || pick_rd) e_msg <= 1'b0;
                else begin
                    e_c <= pick_c;
                    e_msg <= (pq_count[pick_c] != @SW@'d0);
                    rr <= (pick_c == @CW@'d@CM1@) ? @CW@'d0 : pick_c + @CW@'d1;
                end
            end
            3'd1: begin
                state <= 3'd2;
                jp <= 5'd0;
                js <= 5'd0;
                rb <= 5'd0;
                word_v <= 1'b0;
                e_words <= l_wtmp[8:4];
                e_lastb <= (l_size[3:0] == 4'd0) ? 5'd16 : {1'b0, l_size[3:0]};
                e_size <= l_size;
                tx_packets <= tx_packets + 32'd1;
                tx_bytes <= tx_bytes + {23'd0, l_size};
                e_flags <= 8'd0;
                if (e_rsp) begin
                    // A response from the response queue (no payload).
                    e_kind <= 2'd1;
                    e_ptype <= rq_rd[4:0];
                    e_vaddr <= 42'd0;
                    e_dest <= rq_rd[26:5];
                    e_pdid <= rq_rd[42:27];
                    e_seq <= 14'd0;
                    e_first <= 1'b1;
                    e_last <= 1'b1;
                    e_notify <= 1'b0;
                    e_txid <= rq_rd[56:43];
                    e_flags <= rq_rd[64:57];
                end else if (e_msg) begin
                    e_kind <= 2'd2;
                    e_ptype <= 5'd3;
                    e_vaddr <= 42'd0;
                    e_dest <= ps_dest[{e_c, pq_slot}];
                    e_pdid <= ps_pdid[{e_c, pq_slot}];
                    e_seq <= 14'd0;
                    e_first <= 1'b1;
                    e_last <= 1'b1;
                    e_notify <= 1'b0;
                    e_txid <= msg_base + {@TXPAD@pq_slot};
                    e_slot <= pq_slot;
                end else if (d_op && !e_rd) begin
                    e_kind <= 2'd1;
                    e_ptype <= 5'd2;
                    e_vaddr <= d_raddr;
                    e_dest <= d_dest;
                    e_pdid <= d_pdid;
                    e_seq <= 14'd0;
                    e_first <= 1'b1;
                    e_last <= 1'b1;
                    e_notify <= d_notify;
                    e_txid <= d_txid;
                    e_rrword <= {32'd0, d_len, 22'd0, d_laddr};
                end else begin
                    e_kind <= 2'd0;
                    e_ptype <= e_rd ? 5'h10 : 5'h01;
                    e_vaddr <= l_land;
                    e_dest <= e_rd ? rd_e[137:116] : d_dest;
                    e_pdid <= e_rd ? rd_e[153:138] : d_pdid;
                    e_seq <= l_seq;
                    e_first <= !l_act;
                    e_last <= l_last;
                    e_notify <= e_rd ? rd_e[168] : d_notify;
                    e_txid <= e_rd ? rd_e[167:154] : d_txid;
                    e_shift <= l_src[3:0];
                    e_beats <= l_beats;
                    if (e_rd) begin
                        rs_act <= !l_last;
                        rs_src <= l_src + {@SRCPAD@l_n};
                        rs_land <= l_land + {33'd0, l_n};
                        rs_rem <= l_rem - {23'd0, l_n};
                        rs_seq <= l_seq + 14'd1;
                    end else if (l_last) act[e_c] <= 1'b0;
                    else begin
                        act[e_c] <= 1'b1;
                        cur_src[e_c] <= l_src + {@SRCPAD@l_n};
                        cur_land[e_c] <= l_land + {33'd0, l_n};
                        cur_rem[e_c] <= l_rem - {23'd0, l_n};
                        cur_seq[e_c] <= l_seq + 14'd1;
                    end
                end
            end
            3'd2: if (hdr_send) begin
                // No payload: straight to the footer, payload CRC 0.
                if (e_words == 5'd0) begin
                    state <= 3'd4;
                    crc_q <= 32'd0;
                end else state <= 3'd3;
            end
            3'd3: if (pay_send && (js == e_words - 5'd1)) begin
                state <= 3'd4;
                crc_q <= crc32$crc;
            end
            3'd4: if (ftr_send) state <= 3'd0;
            default: state <= 3'd0;
        endcase
        if (prod_fire) begin
            word_q <= prod_word & prod_mask;
            jp <= jp + 5'd1;
        end
        if (prod_fire) word_v <= 1'b1;
        else if (pay_send) word_v <= 1'b0;
        if (pay_send) js <= js + 5'd1;
        if (r_take) begin
            prev <= m_rdata;
            rb <= rb + 5'd1;
        end
    end
end
// Bits the datapath does not need.
wire unused_tx = &{1'b0, l_btmp[3:0], l_wtmp[3:0]@RDUNUSED@};
"#;

fn pad(bits: usize) -> String {
    if bits == 0 {
        String::new()
    } else {
        format!("{bits}'d0, ")
    }
}

/// The Verilog of the transmit engine.
pub fn verilog(g: &Geometry) -> Result<String> {
    let n = &g.p.ni;
    let nc = 1usize << g.cw;
    let cm1 = |t: &str| {
        t.replace("@CM1@", &(g.c - 1).to_string())
            .replace("@ROOMPAD@", &pad(9 - g.pa))
            .replace("@TXPAD@", &pad(14 - g.sa))
            .replace("@SRCPAD@", &pad(n.addr_bits as usize - 9))
    };
    let mut s = g.fill(&cm1(DECL))?;
    // Ready bits and the round-robin pick (lowest channel wins: descending).
    s.push_str("always @(*) begin\n");
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
    s.push_str(&format!(
        "    pick_rsp = (rq_count != {}'d0);\n    pick_rd = (rd_count != {}'d0);\n    pick_now = (state == 3'd0) && (pick_rsp || pick_rd || (tx_en && lo_v)) && !reset;\n    pick_c = hi_v ? hi_c : lo_c;\n    eng_load = (state == 3'd1);\nend\n",
        g.rqa + 1,
        g.rda + 1
    ));
    s.push_str(&g.fill(&cm1(LOAD))?);
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
    s.push_str(&g.fill(&cm1(DATAPATH))?);
    let mut act = String::new();
    for c in 0..nc {
        let _ = writeln!(act, "        act[{}] <= 1'b0;", Geometry::lit(g.cw, c));
    }
    // Source-address bits of a read request above `addr_bits` (always 0
    // in an accepted request: the range check bounds it).
    let rd_unused = if n.addr_bits < 42 {
        format!(", rd_e[41:{}]", n.addr_bits)
    } else {
        String::new()
    };
    s.push_str(
        &g.fill(
            &cm1(SEQ)
                .replace("@ACTRESET@", &act)
                .replace("@RDUNUSED@", &rd_unused),
        )?,
    );
    Ok(s)
}
