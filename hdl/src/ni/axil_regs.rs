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

use super::top::Geometry;
use super::vgen::pad;
use anyhow::Result;
use exanet_sim::ni::regs;
use std::fmt::Write as _;

const DECL: &str = r#"
// ===================== axil_regs =====================
reg        bvalid_q;
reg  [1:0] bresp_q;
reg        rvalid_q;
reg  [1:0] rresp_q;
reg [31:0] rdata_q;
reg        tx_en;
reg [16:0] mbox_q;
reg [15:0] ch_pdid     [0:@NCM1@];
reg  [7:0] ch_err      [0:@NCM1@];
reg [31:0] st_laddr_lo [0:@NCM1@];
reg  [9:0] st_laddr_hi [0:@NCM1@];
reg [31:0] st_raddr_lo [0:@NCM1@];
reg  [9:0] st_raddr_hi [0:@NCM1@];
reg [31:0] st_len      [0:@NCM1@];
reg [21:0] st_dest     [0:@NCM1@];
reg [31:0] st_ctrl     [0:@NCM1@];
reg [21:0] pkt_dest    [0:@NCM1@];
reg [31:0] win_base_lo [0:@NWM1@];
reg  [9:0] win_base_hi [0:@NWM1@];
reg [31:0] win_size_lo [0:@NWM1@];
reg [10:0] win_size_hi [0:@NWM1@];
reg [15:0] win_pdid    [0:@NWM1@];
reg        win_en      [0:@NWM1@];
// Descriptor queues: {pdid, txid, notify, op, dest, len, raddr, laddr}.
(* ram_style = "distributed" *)
reg [169:0] dq_mem [0:@DQN@];
reg [@DQAM1@:0] dq_head  [0:@NCM1@];
reg [@DQAM1@:0] dq_tail  [0:@NCM1@];
reg [@DQWM1@:0] dq_count [0:@NCM1@];

// Slave handshakes: one transaction at a time, none while the scheduler
// picks or loads a packet.
reg acc_ok;
reg wr_fire;
reg rd_fire;
always @(*) begin
    acc_ok = !bvalid_q && !rvalid_q && !pick_now && !eng_load && !rsp_go && !x_commit && !reset;
    wr_fire = acc_ok && s_awvalid && s_wvalid;
    rd_fire = acc_ok && s_arvalid && !(s_awvalid && s_wvalid);
    s_awready = wr_fire;
    s_wready = wr_fire;
    s_arready = rd_fire;
    s_bvalid = bvalid_q;
    s_bresp = bresp_q;
    s_rvalid = rvalid_q;
    s_rdata = rdata_q;
    s_rresp = rresp_q;
end

// Write decode.
reg  [7:0] w_page;
reg [11:0] w_off;
reg  [7:0] w_chn;
reg        w_isch;
reg [@CWM1@:0] w_ch;
reg  [3:0] w_win;
reg        w_ok;
reg a_ctrl, a_mbox, a_pdid, a_win, a_pdidw, a_errclr, a_desc, a_db, a_pdest, a_psend, a_pdata, a_eqpop;
reg a_status, a_cqpop, a_mbpop;
reg  [3:0] db_code;
reg  [3:0] ps_code;
reg [42:0] lsum;
reg [42:0] rsum;
always @(*) begin
    w_page = s_awaddr[19:12];
    w_off = s_awaddr[11:0];
    w_chn = w_page - 8'd3;
    w_isch = (w_page >= 8'd3) && (w_chn < 8'd@C@);
    w_ch = w_chn[@CWM1@:0];
    w_win = w_off[8:5];
end
always @(*) begin
    lsum = {1'b0, st_laddr_hi[w_ch], st_laddr_lo[w_ch]} + {11'd0, st_len[w_ch]};
    rsum = {1'b0, st_raddr_hi[w_ch], st_raddr_lo[w_ch]} + {11'd0, st_len[w_ch]};
    db_code = 4'd0;
    if (dq_count[w_ch] >= @DQW@'d@DQD@) db_code = 4'd1;
    else if (st_ctrl[w_ch][1]) db_code = 4'd4;
    else if (st_len[w_ch] == 32'd0) db_code = 4'd2;
    else if ((lsum > 43'h@LLIM@) || (rsum > 43'h400_0000_0000)) db_code = 4'd3;
    ps_code = 4'd0;
    if ((s_wdata[8:0] == 9'd0) || (s_wdata[8:0] > 9'd@MB@)) ps_code = 4'd6;
    else if (!ps_found) ps_code = 4'd5;
    w_ok = 1'b0;
    a_ctrl = 1'b0; a_mbox = 1'b0; a_pdid = 1'b0; a_win = 1'b0; a_pdidw = 1'b0;
    a_errclr = 1'b0; a_desc = 1'b0; a_db = 1'b0; a_pdest = 1'b0; a_psend = 1'b0; a_pdata = 1'b0; a_eqpop = 1'b0;
    a_status = 1'b0; a_cqpop = 1'b0; a_mbpop = 1'b0;
    if (s_awaddr[1:0] == 2'd0) begin
        if (w_page == 8'd0) begin
            if (s_awprot) begin
                if (w_off == 12'h024) begin a_ctrl = 1'b1; w_ok = 1'b1; end
                else if (w_off == 12'h028) begin a_status = 1'b1; w_ok = 1'b1; end
                else if (w_off == 12'h02C) begin a_mbox = 1'b1; w_ok = 1'b1; end
                else if (w_off == 12'h0D8) begin a_eqpop = 1'b1; w_ok = 1'b1; end
                else if ((w_off >= 12'h100) && (w_off < 12'h@PDEND@)) begin a_pdid = 1'b1; w_ok = 1'b1; end
                else if ((w_off[11:9] == 3'b001) && (w_win < 4'd@WIN@) && ((w_off[4:0] == 5'h00) || (w_off[4:0] == 5'h04)
                         || (w_off[4:0] == 5'h08) || (w_off[4:0] == 5'h0C) || (w_off[4:0] == 5'h10))) begin
                    a_win = 1'b1; w_ok = 1'b1;
                end
            end
        end else if (w_page == 8'd1) begin
            if (w_off == 12'h010) begin a_cqpop = 1'b1; w_ok = 1'b1; end
        end else if (w_page == 8'd2) begin
            if (w_off == 12'h010) begin a_mbpop = 1'b1; w_ok = 1'b1; end
        end else if (w_isch) begin
            case (w_off)
                12'h004: a_pdidw = 1'b1;
                12'h008: begin a_errclr = 1'b1; w_ok = 1'b1; end
                12'h010, 12'h014, 12'h018, 12'h01C, 12'h020, 12'h024, 12'h028: begin a_desc = 1'b1; w_ok = 1'b1; end
                12'h02C: begin a_db = 1'b1; w_ok = (db_code == 4'd0); end
                12'h040: begin a_pdest = 1'b1; w_ok = 1'b1; end
                12'h044: begin a_psend = 1'b1; w_ok = (ps_code == 4'd0); end
                default: if ((w_off >= 12'h100) && (w_off < 12'h@PKEND@)) begin a_pdata = 1'b1; w_ok = 1'b1; end
            endcase
        end
    end
end

// Read decode: the state at the start of the accepting cycle.
reg  [7:0] r_page;
reg [11:0] r_off;
reg  [7:0] r_chn;
reg        r_isch;
reg [@CWM1@:0] r_ch;
reg  [3:0] r_win;
reg        r_ok;
reg [31:0] r_val;
always @(*) begin
    r_page = s_araddr[19:12];
    r_off = s_araddr[11:0];
    r_chn = r_page - 8'd3;
    r_isch = (r_page >= 8'd3) && (r_chn < 8'd@C@);
    r_ch = r_chn[@CWM1@:0];
    r_win = r_off[8:5];
    r_ok = 1'b0;
    r_val = 32'd0;
    if (s_araddr[1:0] == 2'd0) begin
        if (r_page == 8'd0) begin
            if (s_arprot) begin
                r_ok = 1'b1;
                case (r_off)
                    12'h000: r_val = 32'h@ID@;
                    12'h004: r_val = 32'h@PAR0@;
                    12'h008: r_val = 32'h@PAR1@;
                    12'h00C: r_val = 32'h@PAR2@;
                    12'h010: r_val = 32'h@PAR3@;
                    12'h014: r_val = 32'h@PAR4@;
                    12'h020: r_val = {10'd0, node};
                    12'h024: r_val = {31'd0, tx_en};
                    12'h028: r_val = {21'd0, eq_count != @EQW@'d0, mb_count != @MBW@'d0, cq_count != @CQW@'d0,
                                      4'd0, st_hdrc, trk_lost, st_eqovf, st_rxerr};
                    12'h02C: r_val = {15'd0, mbox_q};
                    12'h040: r_val = tx_packets;
                    12'h060: r_val = tx_bytes;
                    12'h044: r_val = rx_packets;
                    12'h048: r_val = rx_rejected;
                    12'h04C: r_val = rx_hdrc;
                    12'h050: r_val = mb_fulln;
                    12'h054: r_val = mb_retry;
                    12'h058: r_val = mb_denied;
                    12'h05C: r_val = rx_bytes;
                    12'h064: r_val = rd_busyn;
                    12'h0C0: r_val = {@EQPAD@eq_count};
                    12'h0C4: r_val = eq_w0;
                    12'h0C8: r_val = eq_w1;
                    12'h0CC: r_val = eq_w2;
                    12'h0D0: r_val = eq_w3;
                    12'h0D4: r_val = eq_w4;
                    12'h0D8: r_val = 32'd0;
                    default: begin
                        if ((r_off >= 12'h084) && (r_off <= 12'h0AC)) r_val = rej_cnt[r_off[5:2]];
                        else if ((r_off >= 12'h100) && (r_off < 12'h@PDEND@)) r_val = {16'd0, ch_pdid[r_off[@CWP1@:2]]};
                        else if ((r_off[11:9] == 3'b001) && (r_win < 4'd@WIN@)) begin
                            case (r_off[4:0])
                                5'h00: r_val = win_base_lo[r_win[@WAM1@:0]];
                                5'h04: r_val = {22'd0, win_base_hi[r_win[@WAM1@:0]]};
                                5'h08: r_val = win_size_lo[r_win[@WAM1@:0]];
                                5'h0C: r_val = {21'd0, win_size_hi[r_win[@WAM1@:0]]};
                                5'h10: r_val = {win_en[r_win[@WAM1@:0]], 15'd0, win_pdid[r_win[@WAM1@:0]]};
                                default: r_ok = 1'b0;
                            endcase
                        end else r_ok = 1'b0;
                    end
                endcase
            end
        end else if (r_page == 8'd1) begin
            r_ok = 1'b1;
            case (r_off)
                12'h000: r_val = {@CQPAD@cq_count};
                12'h004: r_val = cq_w0;
                12'h008: r_val = cq_w1;
                12'h00C: r_val = cq_w2;
                12'h010: r_val = 32'd0;
                default: r_ok = 1'b0;
            endcase
        end else if (r_page == 8'd2) begin
            r_ok = 1'b1;
            case (r_off)
                12'h000: r_val = {@MBPAD@mb_count};
                12'h004: r_val = {23'd0, mb_hlen};
                12'h008: r_val = {10'd0, mb_hm[21:0]};
                12'h00C: r_val = {16'd0, mb_hm[37:22]};
                12'h010: r_val = 32'd0;
                default: begin
                    if ((r_off >= 12'h100) && (r_off < 12'h@PKEND@)) r_val = mb_dw;
                    else r_ok = 1'b0;
                end
            endcase
        end else if (r_isch) begin
            r_ok = 1'b1;
            case (r_off)
                12'h000: r_val = {6'd0, pk_free[r_ch] != @SW@'d@S@, dq_count[r_ch] != @DQW@'d0,
                                  @SPAD@pk_free[r_ch], @DQPAD@(@DQW@'d@DQD@ - dq_count[r_ch])};
                12'h004: r_val = {16'd0, ch_pdid[r_ch]};
                12'h008: r_val = {24'd0, ch_err[r_ch]};
                12'h010: r_val = st_laddr_lo[r_ch];
                12'h014: r_val = {22'd0, st_laddr_hi[r_ch]};
                12'h018: r_val = st_raddr_lo[r_ch];
                12'h01C: r_val = {22'd0, st_raddr_hi[r_ch]};
                12'h020: r_val = st_len[r_ch];
                12'h024: r_val = {10'd0, st_dest[r_ch]};
                12'h028: r_val = st_ctrl[r_ch];
                12'h02C: r_val = 32'd0;
                12'h040: r_val = {10'd0, pkt_dest[r_ch]};
                12'h044: r_val = 32'd0;
                default: begin
                    if ((r_off >= 12'h100) && (r_off < 12'h@PKEND@)) r_val = pw[{r_ch, r_off[@MWAP1@:2]}];
                    else r_ok = 1'b0;
                end
            endcase
        end
    end
end
"#;

const SEQ_HEAD: &str = r#"
// Register file.
always @(posedge clock) begin
    if (reset) begin
        bvalid_q <= 1'b0;
        bresp_q <= 2'd0;
        rvalid_q <= 1'b0;
        rresp_q <= 2'd0;
        rdata_q <= 32'd0;
        tx_en <= 1'b1;
        mbox_q <= 17'd0;
"#;

const SEQ_BODY: &str = r#"    end else begin
        if (bvalid_q && s_bready) bvalid_q <= 1'b0;
        if (rvalid_q && s_rready) rvalid_q <= 1'b0;
        if (rd_fire) begin
            rvalid_q <= 1'b1;
            rdata_q <= r_val;
            rresp_q <= r_ok ? 2'd0 : 2'd2;
        end
        if (wr_fire) begin
            bvalid_q <= 1'b1;
            bresp_q <= w_ok ? 2'd0 : 2'd2;
            if (a_ctrl) tx_en <= s_wdata[0];
            if (a_mbox) mbox_q <= s_wdata[16:0];
            if (a_pdid) ch_pdid[w_off[@CWP1@:2]] <= s_wdata[15:0];
            if (a_win) begin
                case (w_off[4:0])
                    5'h00: win_base_lo[w_win[@WAM1@:0]] <= s_wdata;
                    5'h04: win_base_hi[w_win[@WAM1@:0]] <= s_wdata[9:0];
                    5'h08: win_size_lo[w_win[@WAM1@:0]] <= s_wdata;
                    5'h0C: win_size_hi[w_win[@WAM1@:0]] <= s_wdata[10:0];
                    default: begin
                        win_pdid[w_win[@WAM1@:0]] <= s_wdata[15:0];
                        win_en[w_win[@WAM1@:0]] <= s_wdata[31];
                    end
                endcase
            end
            if (a_pdidw) ch_err[w_ch] <= 8'd8;
            if (a_errclr) ch_err[w_ch] <= 8'd0;
            if (a_desc) begin
                case (w_off[5:0])
                    6'h10: st_laddr_lo[w_ch] <= s_wdata;
                    6'h14: st_laddr_hi[w_ch] <= s_wdata[9:0];
                    6'h18: st_raddr_lo[w_ch] <= s_wdata;
                    6'h1C: st_raddr_hi[w_ch] <= s_wdata[9:0];
                    6'h20: st_len[w_ch] <= s_wdata;
                    6'h24: st_dest[w_ch] <= s_wdata[21:0];
                    default: st_ctrl[w_ch] <= s_wdata & 32'h3FFF_0013;
                endcase
            end
            if (a_db && (db_code != 4'd0)) ch_err[w_ch] <= {4'd0, db_code};
            if (a_pdest) pkt_dest[w_ch] <= s_wdata[21:0];
            if (a_psend && (ps_code != 4'd0)) ch_err[w_ch] <= {4'd0, ps_code};
        end
        // A message refused for good (never in a cycle that accepts a write).
        if (ak_fire && ak_deny) ch_err[k_c] <= 8'd7;
    end
end

// Descriptor queue storage (no reset) and pointers.
always @(posedge clock) begin
    if (wr_fire && a_db && (db_code == 4'd0))
        dq_mem[{w_ch, dq_tail[w_ch]}] <= {ch_pdid[w_ch], st_ctrl[w_ch][29:16], st_ctrl[w_ch][4], st_ctrl[w_ch][0],
            st_dest[w_ch], st_len[w_ch], st_raddr_hi[w_ch], st_raddr_lo[w_ch], st_laddr_hi[w_ch], st_laddr_lo[w_ch]};
end
always @(posedge clock) begin
    if (reset) begin
"#;

const SEQ_TAIL: &str = r#"    end else begin
        if (wr_fire && a_db && (db_code == 4'd0)) begin
            dq_tail[w_ch] <= dq_tail[w_ch] + @DQA@'d1;
            dq_count[w_ch] <= dq_count[w_ch] + @DQW@'d1;
        end
        if (dq_pop) begin
            dq_head[e_c] <= dq_head[e_c] + @DQA@'d1;
            dq_count[e_c] <= dq_count[e_c] - @DQW@'d1;
        end
    end
end
// Bits read only by parts of the decode.
wire unused_axil = &{1'b0, st_ctrl[w_ch][31:30], st_ctrl[w_ch][15:5], st_ctrl[w_ch][3:2], w_off[11:6]};
"#;

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
    let local = [
        ("NWM1", (nw - 1).to_string()),
        ("DQN", ((nc << g.dqa) - 1).to_string()),
        ("LLIM", format!("{:x}", 1u64 << n.addr_bits)),
        (
            "PDEND",
            format!("{:03X}", regs::CH_PDID_BASE as usize + 4 * n.channels),
        ),
        (
            "PKEND",
            format!("{:03X}", regs::PKT_DATA as usize + 4 * g.mw),
        ),
        ("CWP1", (g.cw + 1).to_string()),
        ("MWAP1", (g.mwa + 1).to_string()),
        ("ID", format!("{:08X}", regs::ID_VALUE)),
        ("PAR0", format!("{par0:08X}")),
        ("PAR1", format!("{par1:08X}")),
        ("PAR2", format!("{par2:08X}")),
        ("PAR3", format!("{par3:08X}")),
        ("PAR4", format!("{:08X}", n.addr_bits)),
        ("SPAD", pad(8 - (g.sa + 1))),
        ("DQPAD", pad(16 - (g.dqa + 1))),
        ("EQPAD", pad(32 - (g.eqa + 1))),
        ("CQPAD", pad(32 - (g.cqa + 1))),
        ("MBPAD", pad(32 - (g.mba + 1))),
        ("EQW", (g.eqa + 1).to_string()),
        ("MBW", (g.mba + 1).to_string()),
        ("CQW", (g.cqa + 1).to_string()),
    ];
    let mut s = g.fill_with(DECL, &local)?;
    s.push_str(&g.fill(SEQ_HEAD)?);
    for c in 0..nc {
        for (r, w) in [
            ("ch_pdid", "16'd0"),
            ("ch_err", "8'd0"),
            ("st_laddr_lo", "32'd0"),
            ("st_laddr_hi", "10'd0"),
            ("st_raddr_lo", "32'd0"),
            ("st_raddr_hi", "10'd0"),
            ("st_len", "32'd0"),
            ("st_dest", "22'd0"),
            ("st_ctrl", "32'd0"),
            ("pkt_dest", "22'd0"),
        ] {
            let _ = writeln!(s, "        {r}[{}] <= {w};", Geometry::lit(g.cw, c));
        }
    }
    for w in 0..nw {
        for (r, v) in [
            ("win_base_lo", "32'd0"),
            ("win_base_hi", "10'd0"),
            ("win_size_lo", "32'd0"),
            ("win_size_hi", "11'd0"),
            ("win_pdid", "16'd0"),
            ("win_en", "1'b0"),
        ] {
            let _ = writeln!(s, "        {r}[{}] <= {v};", Geometry::lit(g.wa, w));
        }
    }
    s.push_str(&g.fill_with(SEQ_BODY, &local)?);
    for c in 0..nc {
        let i = Geometry::lit(g.cw, c);
        let _ = writeln!(s, "        dq_head[{i}] <= {}'d0;", g.dqa);
        let _ = writeln!(s, "        dq_tail[{i}] <= {}'d0;", g.dqa);
        let _ = writeln!(s, "        dq_count[{i}] <= {}'d0;", g.dqa + 1);
    }
    s.push_str(&g.fill(SEQ_TAIL)?);
    Ok(s)
}
