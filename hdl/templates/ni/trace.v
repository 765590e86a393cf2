{# trace: the event trace ring (see ni/trace.rs). `{ {{- x }}` opens a concatenation with a generated value. #}
// ===================== trace =====================
// Event trace: up to four events a cycle, in the golden order, into four
// banks of distributed RAM (entry n in bank n mod 4). Observes only.
reg [31:0] tr_now;
reg        tr_en;
reg        tr_wrap;
reg [31:0] tr_count;
reg [31:0] tr_drops;
reg [{{ iam1 }}:0] tr_idx;
// The type of the packet whose footer is on its way out.
reg  [4:0] tr_opt;
{%- for b in 0..4 %}
(* ram_style = "distributed" *)
reg [{{ ew - 1 }}:0] tr_bank{{ b }} [0:{{ bdm1 }}];
{%- endfor %}

// The lanes: their events and entries.
reg        tr_wl_cq;
reg        tr_wl_rq;
reg [13:0] tr_wl_txid;
reg [13:0] tr_mb_txid;
reg  [5:0] tr_v;
{%- for j in 0..6 %}
reg [{{ ew - 1 }}:0] tr_e{{ j }};
reg  [2:0] tr_s{{ j }};
reg [{{ iam1 }}:0] tr_n{{ j }};
{%- endfor %}
reg  [2:0] tr_nv;
reg  [2:0] tr_keep;
always @(*) begin
    tr_wl_cq = lq_rd{{ lq_cqv }};
    tr_wl_rq = lq_rd{{ lq_rqv }};
    tr_wl_txid = tr_wl_cq ? lq_rd{{ lq_cq_txid }} : (tr_wl_rq ? lq_rd{{ lq_rq_txid }} : 14'd0);
    tr_v[0] = x_commit;
    tr_v[1] = cq_wr;
    tr_v[2] = w_land && lq_rd{{ lq_data }};
    tr_v[3] = lp_cq;
    // A popped message's txid: the head's, or the one pushed this cycle.
    tr_mb_txid = (|mb_count) ? mb_hm{{ mb_txid }} : footer_unpack$txid;
    tr_v[4] = (wr_fire && a_db) || mb_pop;
    tr_v[5] = ov_q && ot_q;
    if (!tr_en) tr_v = 6'd0;
{%- for j in 0..6 %}
    tr_e{{ j }} = { {{- ents[j] }}};
{%- endfor %}
    // Each event's rank among the events of the cycle, and its entry.
    tr_s0 = 3'd0;
{%- for j in 1..6 %}
    tr_s{{ j }} = tr_s{{ j - 1 }} + {2'd0, tr_v[{{ j - 1 }}]};
{%- endfor %}
    tr_nv = tr_s5 + {2'd0, tr_v[5]};
    tr_keep = (tr_nv > 3'd4) ? 3'd4 : tr_nv;
{%- for j in 0..6 %}
    tr_n{{ j }} = tr_count[{{ iam1 }}:0] + { {{- s_pad }}tr_s{{ j }}};
{%- endfor %}
end

// Register decode (node page, privileged; `axil_regs` checks page and
// AxPROT): reads of the state at the start of the cycle.
reg        tr_rd_ok;
reg [31:0] tr_rd_val;
reg        tr_wr_ok;
reg [{{ ew - 1 }}:0] tr_rent;
always @(*) begin
    case (tr_idx[1:0])
        2'd0: tr_rent = tr_bank0[tr_idx[{{ iam1 }}:2]];
        2'd1: tr_rent = tr_bank1[tr_idx[{{ iam1 }}:2]];
        2'd2: tr_rent = tr_bank2[tr_idx[{{ iam1 }}:2]];
        default: tr_rent = tr_bank3[tr_idx[{{ iam1 }}:2]];
    endcase
    tr_rd_ok = 1'b1;
    case (r_off)
        {{ r_ctrl.h() }}: tr_rd_val = { {{- ctrl_word }}};
        {{ r_depth.h() }}: tr_rd_val = {{ depth }};
        {{ r_count.h() }}: tr_rd_val = tr_count;
        {{ r_drops.h() }}: tr_rd_val = tr_drops;
        {{ r_idx.h() }}: tr_rd_val = { {{- idx_pad }}tr_idx};
        {{ r_lo.h() }}: tr_rd_val = tr_rent[31:0];
        {{ r_hi.h() }}: tr_rd_val = { {{- hi_pad }}tr_rent[{{ ew - 1 }}:32]};
        default: begin
            tr_rd_ok = 1'b0;
            tr_rd_val = 32'd0;
        end
    endcase
    tr_wr_ok = (w_off == {{ r_ctrl.h() }}) || (w_off == {{ r_idx.h() }});
end

always @(posedge clock) begin
    if (reset) begin
        tr_now <= 32'd0;
        tr_en <= 1'b0;
        tr_wrap <= 1'b0;
        tr_count <= 32'd0;
        tr_drops <= 32'd0;
        tr_idx <= {{ ia }}'d0;
        tr_opt <= 5'd0;
    end else begin
        tr_now <= tr_now + 32'd1;
        if (ftr_send) tr_opt <= b_ptype;
        else if (rsp_go) tr_opt <= rq_rd{{ rq_ptype }};
        tr_count <= tr_count + {29'd0, tr_keep};
        tr_drops <= tr_drops + {29'd0, tr_nv - tr_keep};
        if ({1'b0, tr_count} + {30'd0, tr_keep} > 33'd{{ depth_n }}) tr_wrap <= 1'b1;
        // A TRACE_CTRL write takes effect from the next cycle.
        if (wr_fire && a_trw && (w_off == {{ r_ctrl.h() }})) begin
            tr_en <= s_wdata{{ b_enable }};
            if (s_wdata{{ b_clear }}) begin
                tr_count <= 32'd0;
                tr_drops <= 32'd0;
                tr_wrap <= 1'b0;
            end
        end
        if (wr_fire && a_trw && (w_off == {{ r_idx.h() }})) tr_idx <= s_wdata{{ b_idx }};
    end
end
// The banks: each takes the event of the cycle whose entry falls in it.
always @(posedge clock) begin
{%- for b in 0..4 %}
{%- for j in 0..6 %}
    {% if j > 0 %}else {% endif %}if (tr_v[{{ j }}] && (tr_s{{ j }} < 3'd4) && (tr_n{{ j }}[1:0] == 2'd{{ b }})) tr_bank{{ b }}[tr_n{{ j }}[{{ iam1 }}:2]] <= tr_e{{ j }};
{%- endfor %}
{%- endfor %}
end
