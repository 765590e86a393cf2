{# packetizer: windows, message slots, send queues (see ni/packetizer.rs). `{ {{- x }}` opens a concatenation with a generated value. #}
// ===================== packetizer =====================
reg [31:0] pw [0:{{ pwn }}];
reg [31:0] ps_data [0:{{ psdn }}];
reg  [1:0] ps_state [0:{{ psn }}];
reg  [8:0] ps_len [0:{{ psn }}];
reg [21:0] ps_dest [0:{{ psn }}];
reg [15:0] ps_pdid [0:{{ psn }}];
reg [{{ k.sam1 }}:0] pq_mem [0:{{ psn }}];
reg [{{ k.sam1 }}:0] pq_head [0:{{ k.ncm1 }}];
reg [{{ k.sam1 }}:0] pq_tail [0:{{ k.ncm1 }}];
reg [{{ k.swm1 }}:0] pq_count [0:{{ k.ncm1 }}];
reg [{{ k.swm1 }}:0] pk_free [0:{{ k.ncm1 }}];
reg [{{ k.sam1 }}:0] pq_slot;
reg        ps_found;
reg [{{ k.sam1 }}:0] ps_slot;
reg [127:0] msg_word;
always @(*) begin
    ps_found = 1'b0;
    ps_slot = {{ k.sa }}'d0;
{%- for i in (0..k.s).rev() %}
    if (ps_state[{w_ch, {{ k.sa }}'d{{ i }}}] == 2'd0) begin ps_found = 1'b1; ps_slot = {{ k.sa }}'d{{ i }}; end
{%- endfor %}
end
always @(*) begin
    pq_slot = pq_mem[{e_c, pq_head[e_c]}];
{%- if k.mwa == 2 %}
    msg_word = {ps_data[{b_c, b_slot, 2'd3}], ps_data[{b_c, b_slot, 2'd2}], ps_data[{b_c, b_slot, 2'd1}], ps_data[{b_c, b_slot, 2'd0}]};
{%- else %}
    msg_word = {ps_data[{b_c, b_slot, jp[{{ k.mwa - 3 }}:0], 2'd3}], ps_data[{b_c, b_slot, jp[{{ k.mwa - 3 }}:0], 2'd2}], ps_data[{b_c, b_slot, jp[{{ k.mwa - 3 }}:0], 2'd1}], ps_data[{b_c, b_slot, jp[{{ k.mwa - 3 }}:0], 2'd0}]};
{%- endif %}
end
always @(posedge clock) begin
    if (reset) begin
{%- for ch in 0..k.nc %}
{%- for w in 0..wn %}
        pw[{ {{- k.cw }}'d{{ ch }}, {{ k.mwa }}'d{{ w }}}] <= 32'd0;
{%- endfor %}
{%- endfor %}
    end else if (wr_fire && a_pdata) pw[{w_ch, w_off[{{ k.mwa + 1 }}:2]}] <= s_wdata;
end
always @(posedge clock) begin
    if (wr_fire && a_psend && (ps_code == 4'd0)) begin
{%- for w in 0..k.mw %}
        ps_data[{w_ch, ps_slot, {{ k.mwa }}'d{{ w }}}] <= pw[{w_ch, {{ k.mwa }}'d{{ w }}}];
{%- endfor %}
    end
end
always @(posedge clock) begin
    if (reset) begin
{%- for ch in 0..k.nc %}
{%- for i in 0..sn %}
        ps_state[{ {{- k.cw }}'d{{ ch }}, {{ k.sa }}'d{{ i }}}] <= 2'd0;
{%- endfor %}
        pq_head[{{ k.cw }}'d{{ ch }}] <= {{ k.sa }}'d0;
        pq_tail[{{ k.cw }}'d{{ ch }}] <= {{ k.sa }}'d0;
        pq_count[{{ k.cw }}'d{{ ch }}] <= {{ k.sa + 1 }}'d0;
        pk_free[{{ k.cw }}'d{{ ch }}] <= {{ k.sa + 1 }}'d{{ k.s }};
{%- endfor %}
    end else begin
        if (wr_fire && a_psend && (ps_code == 4'd0)) begin
            ps_state[{w_ch, ps_slot}] <= 2'd1;
            ps_len[{w_ch, ps_slot}] <= s_wdata{{ c.bits.pkt_len }};
            ps_dest[{w_ch, ps_slot}] <= pkt_dest[w_ch];
            ps_pdid[{w_ch, ps_slot}] <= ch_pdid[w_ch];
            pq_mem[{w_ch, pq_tail[w_ch]}] <= ps_slot;
            pq_tail[w_ch] <= pq_tail[w_ch] + {{ k.sa }}'d1;
            pq_count[w_ch] <= pq_count[w_ch] + {{ k.sw }}'d1;
            pk_free[w_ch] <= pk_free[w_ch] - {{ k.sw }}'d1;
        end
        if (pq_pop) begin
            ps_state[{e_c, pq_slot}] <= 2'd2;
            pq_head[e_c] <= pq_head[e_c] + {{ k.sa }}'d1;
            pq_count[e_c] <= pq_count[e_c] - {{ k.sw }}'d1;
        end
        // Acknowledgements (never in a cycle with a send or a pop): an ack
        // or a final nack frees the slot; a nack for "full" or a payload
        // CRC error queues the same message again.
        if (ak_fire) begin
            if (ak_retry) begin
                ps_state[k_idx] <= 2'd1;
                pq_mem[{k_c, pq_tail[k_c]}] <= k_t[{{ k.sam1 }}:0];
                pq_tail[k_c] <= pq_tail[k_c] + {{ k.sa }}'d1;
                pq_count[k_c] <= pq_count[k_c] + {{ k.sw }}'d1;
            end else begin
                ps_state[k_idx] <= 2'd0;
                pk_free[k_c] <= pk_free[k_c] + {{ k.sw }}'d1;
            end
        end
    end
end

