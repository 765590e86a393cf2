//! `rdma_rx`: the receive path (generated Verilog, part of the `ni` top).
//!
//! Store-and-forward, one packet at a time: RECV (flits into `rx_buf`,
//! `2^rxa >= 2 + P/16` words) → CRC (payload words replayed through the
//! second `Crc32`, `crc_rx`) → DECIDE (one cycle, `rx_commit`) → AW → W →
//! B (accepted data packets only) → CRED (one credit per received flit,
//! one per cycle, on the packet's VC) → RECV.
//!
//! DECIDE applies the golden checks in order ([`exanet_sim::ni::rdma_rx`]):
//! word count < 2 (FORMAT, nothing trusted), header SECDED / type
//! (`header_unpack`), footer CRC-8 (`footer_unpack`), word count, destination,
//! payload CRC-32, type rules, protection (windows with the header PDID,
//! range below `2^addr_bits`). The decision uses the register state at the
//! start of the cycle; its counter effects are committed at its end.
//!
//! Built (increment 1 of phase 2): every check, for every type; the reject
//! path (RX_PACKETS, RX_REJECTED, REJ\[r\], HDR_CORRECTED, nothing written);
//! accepted RdmaWrite / RdmaReadResp packets with `last = 0` (one AXI4
//! write burst of the payload, strobed, AWUSER = PDID; RX_DATA_BYTES).
//! Not built: completions (data `last = 1`), the damaged-transfer table,
//! STATUS, mailbox, read requests (their window check), acknowledgements,
//! responses and `Busy`.
//! An accepted packet of a kind not built yet is consumed and counted in
//! RX_PACKETS only; the co-simulation bench does not send such packets.
//!
//! Built also: the error queue (an entry per rejected packet with the
//! trusted header and footer fields, ERRQ_COUNT / ERRQ_W0..W4 / ERRQ_POP;
//! a full queue drops the entry — the sticky ERRQ_OVERFLOW comes with
//! STATUS).
//!
//! Input contract: the sender starts a packet only when it holds all
//! `2 + P/16` credits (virtual cut-through into a one-packet buffer), so
//! the buffer is empty whenever a head flit arrives. Latency: tail flit in
//! cycle t, decision at t + 3 + ceil(size/16) (CRC replay), AW from the
//! next cycle.

use super::top::Geometry;
use anyhow::Result;
use std::fmt::Write as _;

const DECL: &str = r#"
// ===================== rdma_rx =====================
reg  [2:0] rx_st;
reg  [4:0] rx_n;
reg  [3:0] rx_vcq;
reg [127:0] hdr_q;
reg [127:0] ftr_q;
(* ram_style = "distributed" *)
reg [127:0] rx_buf [0:@RXNM1@];
reg  [4:0] rx_j;
reg        rc_start;
reg        rc_valid;
reg [127:0] rc_data;
reg  [4:0] rc_bytes;
reg        rc_done;
reg [31:0] rx_crc;
reg  [4:0] rx_cr;
reg  [4:0] mw_k;
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
(* ram_style = "distributed" *)
reg [118:0] eq_mem [0:@EQNM1@];
reg [@EQAM1@:0] eq_head;
reg [@EQAM1@:0] eq_tail;
reg [@EQA@:0] eq_count;

always @(*) begin
    header_unpack$word = hdr_q;
    footer_unpack$word = ftr_q;
    crc_rx$clock = clock;
    crc_rx$reset = reset;
    crc_rx$start = rc_start;
    crc_rx$valid = rc_valid;
    crc_rx$data = rc_data;
    crc_rx$bytes = rc_bytes;
end

// Checks, in the golden order.
reg [10:0] x_pw;
reg        x_wc_ok;
reg  [4:0] x_pt;
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
reg        x_commit;
reg        x_write;
always @(*) begin
    x_pw = {1'b0, header_unpack$size[13:4]} + {10'd0, header_unpack$size[3:0] != 4'd0};
    x_wc_ok = ({6'd0, rx_n} == x_pw + 11'd2);
    x_pt = header_unpack$ptype;
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
                       || (footer_unpack$flags > 8'd10);
        5'h14: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags != 8'd0);
        5'h15: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags > 8'd10);
        default: x_fmt = 1'b0;
    endcase
    x_p1 = rx_buf[@RXA@'d1];
    x_rqend = {1'b0, x_p1[63:0]} + {33'd0, x_p1[95:64]};
    x_end = {2'd0, header_unpack$vaddr} + {30'd0, header_unpack$size};
    x_range_ok = (x_end <= 44'h@LIM@);
"#;

const DECIDE: &str = r#"
    x_hok = 1'b0;
    x_fok = 1'b0;
    x_reason = 4'd0;
    if (rx_n < 5'd2) x_reason = 4'd4;
    else if (header_unpack$double_err) begin x_reason = 4'd1; x_fok = footer_unpack$crc8_ok; end
    else if (!header_unpack$ptype_known) begin x_reason = 4'd2; x_fok = footer_unpack$crc8_ok; end
    else begin
        x_hok = 1'b1;
        x_fok = footer_unpack$crc8_ok;
        if (!footer_unpack$crc8_ok) x_reason = 4'd3;
        else if (!x_wc_ok) x_reason = 4'd4;
        else if (header_unpack$dest != node) x_reason = 4'd5;
        else if (rx_crc != footer_unpack$payload_crc) x_reason = 4'd6;
        else if ((x_pt == 5'h04) || (x_pt == 5'h12)) x_reason = 4'd10;
        else if (x_fmt) x_reason = 4'd4;
        else if (x_data && !x_range_ok) x_reason = 4'd7;
        else if (x_data && !x_hold) x_reason = 4'd7;
        else if (x_data && !x_pd) x_reason = 4'd8;
        else if ((x_pt == 5'h03) && !mbox_q[16] && (mbox_q[15:0] != header_unpack$pdid)) x_reason = 4'd8;
    end
    x_accept = (x_reason == 4'd0);
    x_commit = (rx_st == 3'd2) && !reset;
    x_write = x_commit && x_accept && x_data;
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
        eq_head <= @EQA@'d0;
        eq_tail <= @EQA@'d0;
        eq_count <= @EQW@'d0;
    end else begin
        if (eq_push) eq_tail <= (eq_tail == @EQA@'d@EQDM1@) ? @EQA@'d0 : eq_tail + @EQA@'d1;
        if (eq_pop) eq_head <= (eq_head == @EQA@'d@EQDM1@) ? @EQA@'d0 : eq_head + @EQA@'d1;
        eq_count <= eq_count + {@EQA@'d0, eq_push} - {@EQA@'d0, eq_pop};
    end
end

// AXI4 write burst: realigned payload words, strobes for [off, off + size).
reg [@RXAM1@:0] mw_icur;
reg [@RXAM1@:0] mw_iprev;
reg [255:0] mw_cat;
reg [255:0] mw_sh;
reg  [9:0] mw_lo16;
reg  [9:0] mw_hi16;
reg  [4:0] mw_lo;
reg  [4:0] mw_hi;
reg [16:0] mw_mhi;
reg [16:0] mw_mlo;
always @(*) begin
    mw_icur = mw_k[@RXAM1@:0] + @RXA@'d1;
    mw_iprev = mw_k[@RXAM1@:0];
    mw_cat = {rx_buf[mw_icur], rx_buf[mw_iprev]};
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
    m_bready = (rx_st == 3'd5);
    credit_out_valid = (rx_st == 3'd6);
    credit_out_vc = rx_vcq;
    rx_commit = x_commit;
end

// Payload replay index and byte count of the last payload word.
reg  [4:0] rx_pwn;
reg  [4:0] rx_lastb;
reg  [8:0] x_wtmp;
always @(*) begin
    rx_pwn = (rx_n < 5'd2) ? 5'd0 : rx_n - 5'd2;
    rx_lastb = (header_unpack$size[3:0] == 4'd0) ? 5'd16 : {1'b0, header_unpack$size[3:0]};
    x_wtmp = {5'd0, header_unpack$vaddr[3:0]} + header_unpack$size[8:0] + 9'd15;
end

always @(posedge clock) begin
    if (rx_st == 3'd0 && in_valid && (in_head || (rx_n != 5'd0))) begin
        rx_buf[in_head ? @RXA@'d0 : rx_n[@RXAM1@:0]] <= in_data;
    end
end

always @(posedge clock) begin
    if (reset) begin
        rx_st <= 3'd0;
        rx_n <= 5'd0;
        rc_start <= 1'b0;
        rc_valid <= 1'b0;
        rc_done <= 1'b0;
        rx_packets <= 32'd0;
        rx_rejected <= 32'd0;
        rx_hdrc <= 32'd0;
        rx_bytes <= 32'd0;
@REJRESET@    end else begin
        rc_start <= 1'b0;
        rc_valid <= 1'b0;
        case (rx_st)
            3'd0: if (in_valid && (in_head || (rx_n != 5'd0))) begin
                if (in_head) begin
                    hdr_q <= in_data;
                    rx_vcq <= in_vc;
                end
                ftr_q <= in_data;
                rx_n <= in_head ? 5'd1 : ((rx_n == 5'd31) ? rx_n : rx_n + 5'd1);
                if (in_tail) begin
                    rx_st <= 3'd1;
                    rx_j <= 5'd0;
                    rc_done <= 1'b0;
                end
            end
            3'd1: begin
                // Feed payload words 1..rx_n-2; the result settles a cycle later.
                if (rc_done) begin
                    rx_crc <= (rx_pwn == 5'd0) ? 32'd0 : crc_rx$crc;
                    rx_st <= 3'd2;
                end else if (rx_j == rx_pwn) rc_done <= 1'b1;
                else begin
                    rc_start <= (rx_j == 5'd0);
                    rc_valid <= 1'b1;
                    rc_data <= rx_buf[rx_j[@RXAM1@:0] + @RXA@'d1];
                    rc_bytes <= (rx_j == rx_pwn - 5'd1) ? rx_lastb : 5'd16;
                    rx_j <= rx_j + 5'd1;
                end
            end
            3'd2: begin
                rx_packets <= rx_packets + 32'd1;
                if (x_hok && header_unpack$single_err) rx_hdrc <= rx_hdrc + 32'd1;
                if (!x_accept) begin
                    rx_rejected <= rx_rejected + 32'd1;
                    rej_cnt[x_reason] <= rej_cnt[x_reason] + 32'd1;
                end
                rx_cr <= rx_n;
                if (x_write) begin
                    rx_bytes <= rx_bytes + {18'd0, header_unpack$size};
                    rx_st <= 3'd3;
                    mw_addr <= header_unpack$vaddr;
                    mw_off <= header_unpack$vaddr[3:0];
                    mw_size <= header_unpack$size[8:0];
                    mw_beats <= x_wtmp[8:4];
                    mw_pdid <= header_unpack$pdid;
                    mw_k <= 5'd0;
                end else rx_st <= 3'd6;
            end
            3'd3: if (m_awready) rx_st <= 3'd4;
            3'd4: if (m_wready) begin
                mw_k <= mw_k + 5'd1;
                if (m_wlast) rx_st <= 3'd5;
            end
            3'd5: if (m_bvalid) rx_st <= 3'd6;
            3'd6: begin
                rx_cr <= rx_cr - 5'd1;
                if (rx_cr == 5'd1) begin
                    rx_st <= 3'd0;
                    rx_n <= 5'd0;
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
                   footer_unpack$notify, footer_unpack$src, footer_unpack$txid, m_bresp, x_end[43:42],
                   mw_sh[255:128]};
"#;

/// The Verilog of the receive path.
pub fn verilog(g: &Geometry) -> Result<String> {
    let n = &g.p.ni;
    let rxn = 1usize << g.rxa;
    let local = |t: &str| -> String {
        t.replace("@RXNM1@", &(rxn - 1).to_string())
            .replace("@RXA@", &g.rxa.to_string())
            .replace("@EQNM1@", &((1usize << g.eqa) - 1).to_string())
            .replace("@EQAM1@", &(g.eqa - 1).to_string())
            .replace("@EQA@", &g.eqa.to_string())
            .replace("@EQW@", &(g.eqa + 1).to_string())
            .replace("@EQDM1@", &(n.errq_depth - 1).to_string())
            .replace("@EQD@", &n.errq_depth.to_string())
            .replace("@RXAM1@", &(g.rxa - 1).to_string())
            .replace("@LIM@", &format!("{:x}", 1u64 << n.addr_bits))
            .replace(
                "@PMODPAD@",
                &if g.pa == 10 {
                    String::new()
                } else {
                    format!("{}'d0, ", 10 - g.pa)
                },
            )
    };
    let mut s = g.fill(&local(DECL))?;
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
    s.push_str(&g.fill(&local(DECIDE).replace("@REJRESET@", &rej))?);
    Ok(s)
}
