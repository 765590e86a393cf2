{# axil_regs: AXI4-Lite slave, register file, descriptor queues (see ni/axil_regs.rs). `{ {{- x }}` opens a concatenation with a generated value. #}
// ===================== axil_regs =====================
reg        bvalid_q;
reg  [1:0] bresp_q;
reg        rvalid_q;
reg  [1:0] rresp_q;
reg [31:0] rdata_q;
reg        tx_en;
reg [16:0] mbox_q;
reg [15:0] ch_pdid     [0:{{ k.ncm1 }}];
reg  [7:0] ch_err      [0:{{ k.ncm1 }}];
reg [31:0] st_laddr_lo [0:{{ k.ncm1 }}];
reg  [9:0] st_laddr_hi [0:{{ k.ncm1 }}];
reg [31:0] st_raddr_lo [0:{{ k.ncm1 }}];
reg  [9:0] st_raddr_hi [0:{{ k.ncm1 }}];
reg [31:0] st_len      [0:{{ k.ncm1 }}];
reg [21:0] st_dest     [0:{{ k.ncm1 }}];
reg [31:0] st_ctrl     [0:{{ k.ncm1 }}];
reg [21:0] pkt_dest    [0:{{ k.ncm1 }}];
reg [31:0] win_base_lo [0:{{ nwm1 }}];
reg  [9:0] win_base_hi [0:{{ nwm1 }}];
reg [31:0] win_size_lo [0:{{ nwm1 }}];
reg [10:0] win_size_hi [0:{{ nwm1 }}];
reg [15:0] win_pdid    [0:{{ nwm1 }}];
reg        win_en      [0:{{ nwm1 }}];
// Descriptor queues: {pdid, txid, notify, op, dest, len, raddr, laddr}.
(* ram_style = "distributed" *)
reg [169:0] dq_mem [0:{{ dqn }}];
reg [{{ k.dqam1 }}:0] dq_head  [0:{{ k.ncm1 }}];
reg [{{ k.dqam1 }}:0] dq_tail  [0:{{ k.ncm1 }}];
reg [{{ k.dqwm1 }}:0] dq_count [0:{{ k.ncm1 }}];

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
reg [{{ k.cwm1 }}:0] w_ch;
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
    w_isch = (w_page >= 8'd3) && (w_chn < 8'd{{ k.c }});
    w_ch = w_chn[{{ k.cwm1 }}:0];
    w_win = w_off[8:5];
end
always @(*) begin
    lsum = {1'b0, st_laddr_hi[w_ch], st_laddr_lo[w_ch]} + {11'd0, st_len[w_ch]};
    rsum = {1'b0, st_raddr_hi[w_ch], st_raddr_lo[w_ch]} + {11'd0, st_len[w_ch]};
    db_code = 4'd0;
    if (dq_count[w_ch] >= {{ k.dqw }}'d{{ k.dqd }}) db_code = 4'd1;
    else if (st_ctrl[w_ch][1]) db_code = 4'd4;
    else if (st_len[w_ch] == 32'd0) db_code = 4'd2;
    else if ((lsum > 43'h{{ llim }}) || (rsum > 43'h400_0000_0000)) db_code = 4'd3;
    ps_code = 4'd0;
    if ((s_wdata[8:0] == 9'd0) || (s_wdata[8:0] > 9'd{{ k.mb }})) ps_code = 4'd6;
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
                else if ((w_off >= 12'h100) && (w_off < 12'h{{ pdend }})) begin a_pdid = 1'b1; w_ok = 1'b1; end
                else if ((w_off[11:9] == 3'b001) && (w_win < 4'd{{ k.win }}) && ((w_off[4:0] == 5'h00) || (w_off[4:0] == 5'h04)
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
                default: if ((w_off >= 12'h100) && (w_off < 12'h{{ pkend }})) begin a_pdata = 1'b1; w_ok = 1'b1; end
            endcase
        end
    end
end

// Read decode: the state at the start of the accepting cycle.
reg  [7:0] r_page;
reg [11:0] r_off;
reg  [7:0] r_chn;
reg        r_isch;
reg [{{ k.cwm1 }}:0] r_ch;
reg  [3:0] r_win;
reg        r_ok;
reg [31:0] r_val;
always @(*) begin
    r_page = s_araddr[19:12];
    r_off = s_araddr[11:0];
    r_chn = r_page - 8'd3;
    r_isch = (r_page >= 8'd3) && (r_chn < 8'd{{ k.c }});
    r_ch = r_chn[{{ k.cwm1 }}:0];
    r_win = r_off[8:5];
    r_ok = 1'b0;
    r_val = 32'd0;
    if (s_araddr[1:0] == 2'd0) begin
        if (r_page == 8'd0) begin
            if (s_arprot) begin
                r_ok = 1'b1;
                case (r_off)
                    12'h000: r_val = 32'h{{ id }};
                    12'h004: r_val = 32'h{{ par0 }};
                    12'h008: r_val = 32'h{{ par1 }};
                    12'h00C: r_val = 32'h{{ par2 }};
                    12'h010: r_val = 32'h{{ par3 }};
                    12'h014: r_val = 32'h{{ par4 }};
                    12'h020: r_val = {10'd0, node};
                    12'h024: r_val = {31'd0, tx_en};
                    12'h028: r_val = {21'd0, eq_count != {{ eqw }}'d0, mb_count != {{ mbw }}'d0, cq_count != {{ cqw }}'d0,
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
                    12'h0C0: r_val = { {{- eqpad }}eq_count};
                    12'h0C4: r_val = eq_w0;
                    12'h0C8: r_val = eq_w1;
                    12'h0CC: r_val = eq_w2;
                    12'h0D0: r_val = eq_w3;
                    12'h0D4: r_val = eq_w4;
                    12'h0D8: r_val = 32'd0;
                    default: begin
                        if ((r_off >= 12'h084) && (r_off <= 12'h0AC)) r_val = rej_cnt[r_off[5:2]];
                        else if ((r_off >= 12'h100) && (r_off < 12'h{{ pdend }})) r_val = {16'd0, ch_pdid[r_off[{{ cwp1 }}:2]]};
                        else if ((r_off[11:9] == 3'b001) && (r_win < 4'd{{ k.win }})) begin
                            case (r_off[4:0])
                                5'h00: r_val = win_base_lo[r_win[{{ k.wam1 }}:0]];
                                5'h04: r_val = {22'd0, win_base_hi[r_win[{{ k.wam1 }}:0]]};
                                5'h08: r_val = win_size_lo[r_win[{{ k.wam1 }}:0]];
                                5'h0C: r_val = {21'd0, win_size_hi[r_win[{{ k.wam1 }}:0]]};
                                5'h10: r_val = {win_en[r_win[{{ k.wam1 }}:0]], 15'd0, win_pdid[r_win[{{ k.wam1 }}:0]]};
                                default: r_ok = 1'b0;
                            endcase
                        end else r_ok = 1'b0;
                    end
                endcase
            end
        end else if (r_page == 8'd1) begin
            r_ok = 1'b1;
            case (r_off)
                12'h000: r_val = { {{- cqpad }}cq_count};
                12'h004: r_val = cq_w0;
                12'h008: r_val = cq_w1;
                12'h00C: r_val = cq_w2;
                12'h010: r_val = 32'd0;
                default: r_ok = 1'b0;
            endcase
        end else if (r_page == 8'd2) begin
            r_ok = 1'b1;
            case (r_off)
                12'h000: r_val = { {{- mbpad }}mb_count};
                12'h004: r_val = {23'd0, mb_hlen};
                12'h008: r_val = {10'd0, mb_hm[21:0]};
                12'h00C: r_val = {16'd0, mb_hm[37:22]};
                12'h010: r_val = 32'd0;
                default: begin
                    if ((r_off >= 12'h100) && (r_off < 12'h{{ pkend }})) r_val = mb_dw;
                    else r_ok = 1'b0;
                end
            endcase
        end else if (r_isch) begin
            r_ok = 1'b1;
            case (r_off)
                12'h000: r_val = {6'd0, pk_free[r_ch] != {{ k.sw }}'d{{ k.s }}, dq_count[r_ch] != {{ k.dqw }}'d0,
                                  {{ spad }}pk_free[r_ch], {{ dqpad }}({{ k.dqw }}'d{{ k.dqd }} - dq_count[r_ch])};
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
                    if ((r_off >= 12'h100) && (r_off < 12'h{{ pkend }})) r_val = pw[{r_ch, r_off[{{ mwap1 }}:2]}];
                    else r_ok = 1'b0;
                end
            endcase
        end
    end
end

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
{%- for c in 0..k.nc %}
        ch_pdid[{{ k.cw }}'d{{ c }}] <= 16'd0;
        ch_err[{{ k.cw }}'d{{ c }}] <= 8'd0;
        st_laddr_lo[{{ k.cw }}'d{{ c }}] <= 32'd0;
        st_laddr_hi[{{ k.cw }}'d{{ c }}] <= 10'd0;
        st_raddr_lo[{{ k.cw }}'d{{ c }}] <= 32'd0;
        st_raddr_hi[{{ k.cw }}'d{{ c }}] <= 10'd0;
        st_len[{{ k.cw }}'d{{ c }}] <= 32'd0;
        st_dest[{{ k.cw }}'d{{ c }}] <= 22'd0;
        st_ctrl[{{ k.cw }}'d{{ c }}] <= 32'd0;
        pkt_dest[{{ k.cw }}'d{{ c }}] <= 22'd0;
{%- endfor %}
{%- for w in 0..nw %}
        win_base_lo[{{ k.wa }}'d{{ w }}] <= 32'd0;
        win_base_hi[{{ k.wa }}'d{{ w }}] <= 10'd0;
        win_size_lo[{{ k.wa }}'d{{ w }}] <= 32'd0;
        win_size_hi[{{ k.wa }}'d{{ w }}] <= 11'd0;
        win_pdid[{{ k.wa }}'d{{ w }}] <= 16'd0;
        win_en[{{ k.wa }}'d{{ w }}] <= 1'b0;
{%- endfor %}
    end else begin
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
            if (a_pdid) ch_pdid[w_off[{{ cwp1 }}:2]] <= s_wdata[15:0];
            if (a_win) begin
                case (w_off[4:0])
                    5'h00: win_base_lo[w_win[{{ k.wam1 }}:0]] <= s_wdata;
                    5'h04: win_base_hi[w_win[{{ k.wam1 }}:0]] <= s_wdata[9:0];
                    5'h08: win_size_lo[w_win[{{ k.wam1 }}:0]] <= s_wdata;
                    5'h0C: win_size_hi[w_win[{{ k.wam1 }}:0]] <= s_wdata[10:0];
                    default: begin
                        win_pdid[w_win[{{ k.wam1 }}:0]] <= s_wdata[15:0];
                        win_en[w_win[{{ k.wam1 }}:0]] <= s_wdata[31];
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
{%- for c in 0..k.nc %}
        dq_head[{{ k.cw }}'d{{ c }}] <= {{ k.dqa }}'d0;
        dq_tail[{{ k.cw }}'d{{ c }}] <= {{ k.dqa }}'d0;
        dq_count[{{ k.cw }}'d{{ c }}] <= {{ k.dqa + 1 }}'d0;
{%- endfor %}
    end else begin
        if (wr_fire && a_db && (db_code == 4'd0)) begin
            dq_tail[w_ch] <= dq_tail[w_ch] + {{ k.dqa }}'d1;
            dq_count[w_ch] <= dq_count[w_ch] + {{ k.dqw }}'d1;
        end
        if (dq_pop) begin
            dq_head[e_c] <= dq_head[e_c] + {{ k.dqa }}'d1;
            dq_count[e_c] <= dq_count[e_c] - {{ k.dqw }}'d1;
        end
    end
end
// Bits read only by parts of the decode.
wire unused_axil = &{1'b0, st_ctrl[w_ch][31:30], st_ctrl[w_ch][15:5], st_ctrl[w_ch][3:2], w_off[11:6]};

