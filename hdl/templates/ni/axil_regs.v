{# axil_regs: AXI4-Lite slave, register file, descriptor queues (see ni/axil_regs.rs). `{ {{- x }}` opens a concatenation with a generated value. #}
// ===================== axil_regs =====================
reg        bvalid_q;
reg  [1:0] bresp_q;
reg        rvalid_q;
reg  [1:0] rresp_q;
reg [31:0] rdata_q;
reg        tx_en;
reg [16:0] mbox_q;
reg [{{ c.bits.irq_enable.width - 1 }}:0] irq_en;
reg        irq_q;
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
reg [{{ r.dq.width() - 1 }}:0] dq_mem [0:{{ dqn }}];
reg [{{ k.dqam1 }}:0] dq_head  [0:{{ k.ncm1 }}];
reg [{{ k.dqam1 }}:0] dq_tail  [0:{{ k.ncm1 }}];
reg [{{ k.dqwm1 }}:0] dq_count [0:{{ k.ncm1 }}];

// Slave handshakes: one transaction at a time, none while the scheduler
// picks or loads a packet.
reg acc_ok;
reg wr_fire;
reg rd_fire;
always @(*) begin
    acc_ok = !bvalid_q && !rvalid_q && !pick_now && !eng_load && !rsp_go && !x_commit && !reset{% if k.ar %} && !ar_hold && !ar_dbw{% endif %};
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
reg a_status, a_cqpop, a_mbpop, a_irqen;{% if k.tr %}
reg a_trw;{% endif %}{% if k.ar %}
reg a_ardb, a_arw;{% endif %}
reg  [3:0] db_code;
reg  [3:0] ps_code;
reg [42:0] lsum;
reg [42:0] rsum;
always @(*) begin
    w_page = s_awaddr[19:12];
    w_off = s_awaddr[11:0];
    w_chn = w_page - {{ c.reg.ch_page0 }};
    w_isch = (w_page >= {{ c.reg.ch_page0 }}) && (w_chn < 8'd{{ k.c }});
    w_ch = w_chn[{{ k.cwm1 }}:0];
    w_win = w_off{{ c.reg.win_index_bits }};
end
always @(*) begin
    lsum = {1'b0, st_laddr_hi[w_ch], st_laddr_lo[w_ch]} + {11'd0, st_len[w_ch]};
    rsum = {1'b0, st_raddr_hi[w_ch], st_raddr_lo[w_ch]} + {11'd0, st_len[w_ch]};
    db_code = 4'd0;
{%- if k.ar %}
    // An allreduce descriptor goes to the engine: refused only when its
    // completions waiting for CQ room fill its queue.
    if (db_ar) begin
        if (ar_qfull) db_code = {{ c.ch.queue_full }};
    end else
{%- endif %}
    if (dq_count[w_ch] >= {{ k.dqw }}'d{{ k.dqd }}) db_code = {{ c.ch.queue_full }};
    else if (st_ctrl[w_ch]{{ c.bits.ctrl_bad_op }}) db_code = {{ c.ch.bad_op }};
    else if (st_len[w_ch] == 32'd0) db_code = {{ c.ch.bad_len }};
    else if ((lsum > 43'h{{ llim }}) || (rsum > {{ c.size.vaddr_end43.hg() }})) db_code = {{ c.ch.bad_addr }};
    ps_code = 4'd0;
    if ((s_wdata{{ c.bits.pkt_len }} == 9'd0) || (s_wdata{{ c.bits.pkt_len }} > 9'd{{ k.mb }})) ps_code = {{ c.ch.pkt_bad_len }};
    else if (!ps_found) ps_code = {{ c.ch.pkt_full }};
    w_ok = 1'b0;
    a_ctrl = 1'b0; a_mbox = 1'b0; a_pdid = 1'b0; a_win = 1'b0; a_pdidw = 1'b0;
    a_errclr = 1'b0; a_desc = 1'b0; a_db = 1'b0; a_pdest = 1'b0; a_psend = 1'b0; a_pdata = 1'b0; a_eqpop = 1'b0;
    a_status = 1'b0; a_cqpop = 1'b0; a_mbpop = 1'b0; a_irqen = 1'b0;{% if k.tr %}
    a_trw = 1'b0;{% endif %}{% if k.ar %}
    a_ardb = 1'b0; a_arw = 1'b0;{% endif %}
    if (s_awaddr[1:0] == 2'd0) begin
        if (w_page == {{ c.reg.node_page }}) begin
            if (s_awprot) begin
                if (w_off == {{ c.reg.control.h() }}) begin a_ctrl = 1'b1; w_ok = 1'b1; end
                else if (w_off == {{ c.reg.status.h() }}) begin a_status = 1'b1; w_ok = 1'b1; end
                else if (w_off == {{ c.reg.mbox_ctrl.h() }}) begin a_mbox = 1'b1; w_ok = 1'b1; end
                else if (w_off == {{ c.reg.irq_enable.h() }}) begin a_irqen = 1'b1; w_ok = 1'b1; end
                else if (w_off == {{ c.reg.errq_pop.h() }}) begin a_eqpop = 1'b1; w_ok = 1'b1; end
                else if ((w_off >= {{ c.reg.ch_pdid_base.h() }}) && (w_off < {{ c.reg.ch_pdid_end.h() }})) begin a_pdid = 1'b1; w_ok = 1'b1; end
                else if ((w_off{{ c.reg.win_region_bits }} == {{ c.reg.win_region.b() }}) && (w_win < 4'd{{ k.win }}) && ((w_off{{ c.reg.win_field_bits }} == {{ c.reg.win_base_lo.h() }}) || (w_off{{ c.reg.win_field_bits }} == {{ c.reg.win_base_hi.h() }})
                         || (w_off{{ c.reg.win_field_bits }} == {{ c.reg.win_size_lo.h() }}) || (w_off{{ c.reg.win_field_bits }} == {{ c.reg.win_size_hi.h() }}) || (w_off{{ c.reg.win_field_bits }} == {{ c.reg.win_ctrl.h() }}))) begin
                    a_win = 1'b1; w_ok = 1'b1;
                end{% if k.tr %}
                else if (tr_wr_ok) begin a_trw = 1'b1; w_ok = 1'b1; end{% endif %}{% if k.ar %}
                else if (ar$0$wr_ok) begin a_arw = 1'b1; w_ok = 1'b1; end{% endif %}
            end
        end else if (w_page == {{ c.reg.cq_page }}) begin
            if (w_off == {{ c.reg.cq_pop.h() }}) begin a_cqpop = 1'b1; w_ok = 1'b1; end
        end else if (w_page == {{ c.reg.mb_page }}) begin
            if (w_off == {{ c.reg.mb_pop.h() }}) begin a_mbpop = 1'b1; w_ok = 1'b1; end
        end else if (w_isch) begin
            case (w_off)
                {{ c.reg.ch_pdid.h() }}: a_pdidw = 1'b1;
                {{ c.reg.ch_err.h() }}: begin a_errclr = 1'b1; w_ok = 1'b1; end
                {% for d in c.reg.desc %}{% if !loop.first %}, {% endif %}{{ d.h() }}{% endfor %}: begin a_desc = 1'b1; w_ok = 1'b1; end
                {{ c.reg.doorbell.h() }}: begin {% if k.ar %}if (db_ar) a_ardb = 1'b1; else {% endif %}a_db = 1'b1; w_ok = (db_code == 4'd0); end
                {{ c.reg.pkt_dest.h() }}: begin a_pdest = 1'b1; w_ok = 1'b1; end
                {{ c.reg.pkt_send.h() }}: begin a_psend = 1'b1; w_ok = (ps_code == 4'd0); end
                default: if ((w_off >= {{ c.reg.pkt_data.h() }}) && (w_off < {{ c.reg.pkt_data_end.h() }})) begin a_pdata = 1'b1; w_ok = 1'b1; end
            endcase
        end
    end
end

// STATUS as software reads it, and the interrupt it raises: `irq` is
// registered, so it shows in cycle t + 1 the STATUS of cycle t.
reg [31:0] status_w;
always @(*) begin
    status_w = { {{- status_live }},
                {{ status_sticky }}};
    irq = irq_q;
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
    r_chn = r_page - {{ c.reg.ch_page0 }};
    r_isch = (r_page >= {{ c.reg.ch_page0 }}) && (r_chn < 8'd{{ k.c }});
    r_ch = r_chn[{{ k.cwm1 }}:0];
    r_win = r_off{{ c.reg.win_index_bits }};
    r_ok = 1'b0;
    r_val = 32'd0;
    if (s_araddr[1:0] == 2'd0) begin
        if (r_page == {{ c.reg.node_page }}) begin
            if (s_arprot) begin
                r_ok = 1'b1;
                case (r_off)
                    {{ c.reg.id.h() }}: r_val = {{ c.reg.id_value.h() }};
{%- for i in 0..5 %}
                    {{ c.reg.params[i].h() }}: r_val = {{ c.reg.params_value[i].h() }};
{%- endfor %}
                    {{ c.reg.coords.h() }}: r_val = { {{- c.bits.coords.pad32() }}node};
                    {{ c.reg.control.h() }}: r_val = { {{- c.bits.tx_enable.pad32() }}tx_en};
                    {{ c.reg.status.h() }}: r_val = status_w;
                    {{ c.reg.mbox_ctrl.h() }}: r_val = { {{- c.bits.mbox_ctrl.pad32() }}mbox_q};
                    {{ c.reg.irq_enable.h() }}: r_val = { {{- c.bits.irq_enable.pad32() }}irq_en};
                    {{ c.reg.tx_packets.h() }}: r_val = tx_packets;
                    {{ c.reg.tx_payload_bytes.h() }}: r_val = tx_bytes;
                    {{ c.reg.rx_packets.h() }}: r_val = rx_packets;
                    {{ c.reg.rx_rejected.h() }}: r_val = rx_rejected;
                    {{ c.reg.hdr_corrected.h() }}: r_val = rx_hdrc;
                    {{ c.reg.mb_full_nacks.h() }}: r_val = mb_fulln;
                    {{ c.reg.mb_retries.h() }}: r_val = mb_retry;
                    {{ c.reg.mb_denied.h() }}: r_val = mb_denied;
                    {{ c.reg.rx_data_bytes.h() }}: r_val = rx_bytes;
                    {{ c.reg.rd_busy_nacks.h() }}: r_val = rd_busyn;
                    {{ c.reg.rd_slverr.h() }}: r_val = rd_slverr;
                    {{ c.reg.rd_decerr.h() }}: r_val = rd_decerr;
                    {{ c.reg.wr_slverr.h() }}: r_val = wr_slverr;
                    {{ c.reg.wr_decerr.h() }}: r_val = wr_decerr;
                    {{ c.reg.errq_count.h() }}: r_val = { {{- eqpad }}eq_count};
{%- for i in 0..5 %}
                    {{ c.reg.errq_w[i].h() }}: r_val = eq_w{{ i }};
{%- endfor %}
                    {{ c.reg.errq_pop.h() }}: r_val = 32'd0;
                    default: begin
                        if ((r_off >= {{ c.reg.rej_first.h() }}) && (r_off <= {{ c.reg.rej_last.h() }})) r_val = rej_cnt[r_off{{ c.reg.rej_index }}];
                        else if ((r_off >= {{ c.reg.ch_pdid_base.h() }}) && (r_off < {{ c.reg.ch_pdid_end.h() }})) r_val = { {{- c.bits.ch_pdid.pad32() }}ch_pdid[r_off[{{ cwp1 }}:2]]};
                        else if ((r_off{{ c.reg.win_region_bits }} == {{ c.reg.win_region.b() }}) && (r_win < 4'd{{ k.win }})) begin
                            case (r_off{{ c.reg.win_field_bits }})
                                {{ c.reg.win_base_lo.h() }}: r_val = win_base_lo[r_win[{{ k.wam1 }}:0]];
                                {{ c.reg.win_base_hi.h() }}: r_val = { {{- c.bits.win_base_hi.pad32() }}win_base_hi[r_win[{{ k.wam1 }}:0]]};
                                {{ c.reg.win_size_lo.h() }}: r_val = win_size_lo[r_win[{{ k.wam1 }}:0]];
                                {{ c.reg.win_size_hi.h() }}: r_val = { {{- c.bits.win_size_hi.pad32() }}win_size_hi[r_win[{{ k.wam1 }}:0]]};
                                {{ c.reg.win_ctrl.h() }}: r_val = { {{- win_ctrl }}};
                                default: r_ok = 1'b0;
                            endcase
                        end{% if k.tr %}
                        else if (tr_rd_ok) r_val = tr_rd_val;{% endif %}{% if k.ar %}
                        else if (ar_rd_ok) r_val = ar_rd_val;{% endif %}
                        else r_ok = 1'b0;
                    end
                endcase
            end
        end else if (r_page == {{ c.reg.cq_page }}) begin
            r_ok = 1'b1;
            case (r_off)
                {{ c.reg.cq_count.h() }}: r_val = { {{- cqpad }}cq_count};
{%- for i in 0..3 %}
                {{ c.reg.cq_w[i].h() }}: r_val = cq_w{{ i }};
{%- endfor %}
                {{ c.reg.cq_pop.h() }}: r_val = 32'd0;
                default: r_ok = 1'b0;
            endcase
        end else if (r_page == {{ c.reg.mb_page }}) begin
            r_ok = 1'b1;
            case (r_off)
                {{ c.reg.mb_count.h() }}: r_val = { {{- mbpad }}mb_count};
                {{ c.reg.mb_len.h() }}: r_val = { {{- c.bits.pkt_len.pad32() }}mb_hlen};
                {{ c.reg.mb_src.h() }}: r_val = { {{- c.bits.coords.pad32() }}mb_hm{{ r.mb.at("src") }}};
                {{ c.reg.mb_pdid.h() }}: r_val = { {{- c.bits.ch_pdid.pad32() }}mb_hm{{ r.mb.at("pdid") }}};
                {{ c.reg.mb_pop.h() }}: r_val = 32'd0;
                default: begin
                    if ((r_off >= {{ c.reg.mb_data.h() }}) && (r_off < {{ c.reg.mb_data_end.h() }})) r_val = mb_dw;
                    else r_ok = 1'b0;
                end
            endcase
        end else if (r_isch) begin
            r_ok = 1'b1;
            case (r_off)
                {{ c.reg.ch_status.h() }}: r_val = { {{- ch_status_flags }},
                                  {{ ch_status_free }}};
                {{ c.reg.ch_pdid.h() }}: r_val = { {{- c.bits.ch_pdid.pad32() }}ch_pdid[r_ch]};
                {{ c.reg.ch_err.h() }}: r_val = {24'd0, ch_err[r_ch]};
                {{ c.reg.desc[0].h() }}: r_val = st_laddr_lo[r_ch];
                {{ c.reg.desc[1].h() }}: r_val = { {{- c.bits.addr_hi.pad32() }}st_laddr_hi[r_ch]};
                {{ c.reg.desc[2].h() }}: r_val = st_raddr_lo[r_ch];
                {{ c.reg.desc[3].h() }}: r_val = { {{- c.bits.addr_hi.pad32() }}st_raddr_hi[r_ch]};
                {{ c.reg.desc[4].h() }}: r_val = st_len[r_ch];
                {{ c.reg.desc[5].h() }}: r_val = { {{- c.bits.coords.pad32() }}st_dest[r_ch]};
                {{ c.reg.desc[6].h() }}: r_val = st_ctrl[r_ch];
                {{ c.reg.doorbell.h() }}: r_val = 32'd0;
                {{ c.reg.pkt_dest.h() }}: r_val = { {{- c.bits.coords.pad32() }}pkt_dest[r_ch]};
                {{ c.reg.pkt_send.h() }}: r_val = 32'd0;
                default: begin
                    if ((r_off >= {{ c.reg.pkt_data.h() }}) && (r_off < {{ c.reg.pkt_data_end.h() }})) r_val = pw[{r_ch, r_off[{{ mwap1 }}:2]}];
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
        mbox_q <= {{ c.bits.mbox_ctrl.width }}'d0;
        irq_en <= {{ c.bits.irq_enable.width }}'d0;
        irq_q <= 1'b0;
{%- for ch in 0..k.nc %}
        ch_pdid[{{ k.cw }}'d{{ ch }}] <= 16'd0;
        ch_err[{{ k.cw }}'d{{ ch }}] <= 8'd0;
        st_laddr_lo[{{ k.cw }}'d{{ ch }}] <= 32'd0;
        st_laddr_hi[{{ k.cw }}'d{{ ch }}] <= 10'd0;
        st_raddr_lo[{{ k.cw }}'d{{ ch }}] <= 32'd0;
        st_raddr_hi[{{ k.cw }}'d{{ ch }}] <= 10'd0;
        st_len[{{ k.cw }}'d{{ ch }}] <= 32'd0;
        st_dest[{{ k.cw }}'d{{ ch }}] <= 22'd0;
        st_ctrl[{{ k.cw }}'d{{ ch }}] <= 32'd0;
        pkt_dest[{{ k.cw }}'d{{ ch }}] <= 22'd0;
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
        irq_q <= |(status_w{{ c.bits.irq_enable }} & irq_en);
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
            if (a_ctrl) tx_en <= s_wdata{{ c.bits.tx_enable }};
            if (a_mbox) mbox_q <= s_wdata{{ c.bits.mbox_ctrl }};
            if (a_irqen) irq_en <= s_wdata{{ c.bits.irq_enable }} & {{ c.bits.irq_mask.h() }};
            if (a_pdid) ch_pdid[w_off[{{ cwp1 }}:2]] <= s_wdata{{ c.bits.ch_pdid }};
            if (a_win) begin
                case (w_off{{ c.reg.win_field_bits }})
                    {{ c.reg.win_base_lo.h() }}: win_base_lo[w_win[{{ k.wam1 }}:0]] <= s_wdata;
                    {{ c.reg.win_base_hi.h() }}: win_base_hi[w_win[{{ k.wam1 }}:0]] <= s_wdata{{ c.bits.win_base_hi }};
                    {{ c.reg.win_size_lo.h() }}: win_size_lo[w_win[{{ k.wam1 }}:0]] <= s_wdata;
                    {{ c.reg.win_size_hi.h() }}: win_size_hi[w_win[{{ k.wam1 }}:0]] <= s_wdata{{ c.bits.win_size_hi }};
                    default: begin
                        win_pdid[w_win[{{ k.wam1 }}:0]] <= s_wdata{{ c.bits.win_pdid }};
                        win_en[w_win[{{ k.wam1 }}:0]] <= s_wdata{{ c.bits.win_enable }};
                    end
                endcase
            end
            if (a_pdidw) ch_err[w_ch] <= {{ c.ch.pdid_write }};
            if (a_errclr) ch_err[w_ch] <= 8'd0;
            if (a_desc) begin
                case (w_off[5:0])
                    {{ c.reg.desc6[0].h() }}: st_laddr_lo[w_ch] <= s_wdata;
                    {{ c.reg.desc6[1].h() }}: st_laddr_hi[w_ch] <= s_wdata{{ c.bits.addr_hi }};
                    {{ c.reg.desc6[2].h() }}: st_raddr_lo[w_ch] <= s_wdata;
                    {{ c.reg.desc6[3].h() }}: st_raddr_hi[w_ch] <= s_wdata{{ c.bits.addr_hi }};
                    {{ c.reg.desc6[4].h() }}: st_len[w_ch] <= s_wdata;
                    {{ c.reg.desc6[5].h() }}: st_dest[w_ch] <= s_wdata{{ c.bits.coords }};
                    default: st_ctrl[w_ch] <= s_wdata & {{ c.bits.ctrl_mask.hg() }};
                endcase
            end
            if ((a_db{% if k.ar %} || a_ardb{% endif %}) && (db_code != 4'd0)) ch_err[w_ch] <= {4'd0, db_code};
            if (a_pdest) pkt_dest[w_ch] <= s_wdata{{ c.bits.coords }};
            if (a_psend && (ps_code != 4'd0)) ch_err[w_ch] <= {4'd0, ps_code};
        end
        // A message refused for good (never in a cycle that accepts a write).
        if (ak_fire && ak_deny) ch_err[k_c] <= {{ c.ch.msg_denied }};
    end
end

// Descriptor queue storage (no reset) and pointers.
always @(posedge clock) begin
    if (wr_fire && a_db && (db_code == 4'd0))
        dq_mem[{w_ch, dq_tail[w_ch]}] <= {ch_pdid[w_ch], st_ctrl[w_ch]{{ c.bits.ctrl_txid }}, st_ctrl[w_ch]{{ c.bits.ctrl_notify }}, st_ctrl[w_ch]{{ c.bits.ctrl_read }},
            st_dest[w_ch], st_len[w_ch], st_raddr_hi[w_ch], st_raddr_lo[w_ch], st_laddr_hi[w_ch], st_laddr_lo[w_ch]};
end
always @(posedge clock) begin
    if (reset) begin
{%- for ch in 0..k.nc %}
        dq_head[{{ k.cw }}'d{{ ch }}] <= {{ k.dqa }}'d0;
        dq_tail[{{ k.cw }}'d{{ ch }}] <= {{ k.dqa }}'d0;
        dq_count[{{ k.cw }}'d{{ ch }}] <= {{ k.dqa + 1 }}'d0;
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
wire unused_axil = &{1'b0{% for u in c.bits.ctrl_unused %}, st_ctrl[w_ch]{{ u }}{% endfor %}, w_off[11:6]};

