// link_rx: generated from hdl/templates/link/link_rx.v ({{ flit_bits }}-bit flits, {{ vcs }} VCs,
// frames of up to {{ frame_flits }} flits, {{ rxb }}-flit receive buffers, {{ rc }} router credits).
// Every field position, code and size below comes from exanet_sim::link.
//
// Data words go straight into every VC's buffer at that VC's committed tail
// plus the flit's index in the frame (the VC is only known at the trailer);
// a good in-order trailer commits the frame to its VC (tail += n, and its
// sideband descriptor into the VC's descriptor queue), anything else leaves
// the tails where they were, which rolls the speculative writes back.
// Each VC buffer has {{ depth }} slots >= {{ rxb }} held + {{ frame_flits }} speculative, so
// a speculative write never lands on a held flit.
// The flit to the router is picked in the trailer's cycle too (a frame
// committed this cycle is eligible), so it reads the buffer at the read
// pointer, which equals the tail when the VC holds nothing.

// CRC-32 register after one 64-bit data word (8 bytes, little-endian), from s.
function automatic [31:0] crc_word(input [31:0] s, input [63:0] d);
    begin
{%- for m in crc64 %}
        crc_word[{{ loop.index0 }}] = (^(s & 32'h{{ m.0 }})) ^ (^(d & 64'h{{ m.1 }}));
{%- endfor %}
    end
endfunction
// CRC-32 register after the 4 field bytes of a control word, from s.
function automatic [31:0] crc_fields(input [31:0] s, input [31:0] d);
    begin
{%- for m in crc32 %}
        crc_fields[{{ loop.index0 }}] = (^(s & 32'h{{ m.0 }})) ^ (^(d & 32'h{{ m.1 }}));
{%- endfor %}
    end
endfunction

reg [1:0] state;
reg heard;
reg peer_v;
reg [31:0] peer_f;
reg [{{ seq_m1 }}:0] ack;
reg [7:0] nackc;
reg [7:0] urg;
reg [{{ seq_m1 }}:0] expected;
reg [{{ hb_m1 }}:0] holdoff;
reg [31:0] crc;
reg [{{ wcb_m1 }}:0] wcnt;
reg poisoned;
{%- if wpf > 1 %}
reg [{{ asm_m1 }}:0] asm_w;
{%- endif %}
reg [{{ vb_m1 }}:0] rr;
reg ovalid;
reg ohead;
reg otail;
reg [{{ vb_m1 }}:0] osel;
reg [31:0] c_frames_received;
reg [31:0] c_crc_errors;
reg [31:0] c_ctrl_crc_errors;
reg [31:0] c_seq_errors;
reg [31:0] c_duplicates;
reg [31:0] c_link_downs;
reg [31:0] c_bad_acks;
reg [31:0] c_training_errors;
reg [31:0] c_overflows;
// Frame descriptors (flits, head, tail slots), {{ dd }} per VC, VC in the high address bits.
(* ram_style = "distributed" *)
reg [{{ desc_m1 }}:0] desc [0:{{ desc_words_m1 }}];
{%- for v in vs %}
reg [7:0] freed_{{ v }};
reg [{{ ab_m1 }}:0] tail_{{ v }};
reg [{{ ab_m1 }}:0] rdp_{{ v }};
reg [{{ cb_m1 }}:0] count_{{ v }};
reg [{{ dab_m1 }}:0] dwr_{{ v }};
reg [{{ dab_m1 }}:0] drd_{{ v }};
reg [{{ tb_m1 }}:0] pos_{{ v }};
reg [{{ rcb_m1 }}:0] rcred_{{ v }};
reg [{{ w_m1 }}:0] q_{{ v }};
(* ram_style = "block" *)
reg [{{ w_m1 }}:0] mem_{{ v }} [0:{{ depth_m1 }}];
{%- endfor %}
initial begin
    state = 2'd{{ st_down }};
    heard = 1'b0;
    peer_v = 1'b0;
    peer_f = 32'd0;
    ack = {{ seq }}'d{{ seq_max }};
    nackc = 8'd0;
    urg = 8'd0;
    expected = {{ seq }}'d0;
    holdoff = {{ hb }}'d0;
    crc = 32'h{{ crc_init }};
    wcnt = {{ wcb }}'d0;
    poisoned = 1'b0;
    rr = {{ vb }}'d0;
    ovalid = 1'b0;
    ohead = 1'b0;
    otail = 1'b0;
    osel = {{ vb }}'d0;
    c_frames_received = 32'd0;
    c_crc_errors = 32'd0;
    c_ctrl_crc_errors = 32'd0;
    c_seq_errors = 32'd0;
    c_duplicates = 32'd0;
    c_link_downs = 32'd0;
    c_bad_acks = 32'd0;
    c_training_errors = 32'd0;
    c_overflows = 32'd0;
{%- for v in vs %}
    freed_{{ v }} = 8'd0;
    tail_{{ v }} = {{ ab }}'d0;
    rdp_{{ v }} = {{ ab }}'d0;
    count_{{ v }} = {{ cb }}'d0;
    dwr_{{ v }} = {{ dab }}'d0;
    drd_{{ v }} = {{ dab }}'d0;
    pos_{{ v }} = {{ tb }}'d0;
    rcred_{{ v }} = {{ rcb }}'d{{ rc }};
{%- endfor %}
end

// The word of this cycle.
wire [31:0] f = phy_rx_data[63:32];
wire [31:0] sum = phy_rx_data[31:0];
wire [{{ kb_m1 }}:0] kind = f[31:{{ kind_pos }}];
wire sealed0 = sum == (crc_fields(32'h{{ crc_init }}, f) ^ 32'h{{ crc_xorout }});
wire sealedf = sum == (crc_fields(crc, f) ^ 32'h{{ crc_xorout }});
wire is_ctl = (kind == {{ kb }}'d{{ kind_control }}) && ((f & 32'h{{ ctl_res }}) == 32'd0);
wire is_trn = (kind == {{ kb }}'d{{ kind_training }}) && ((f & 32'h{{ magic_mask }}) == 32'h{{ magic }});
wire trn_ok = f[{{ ok_pos }}];
wire is_trl = (kind == {{ kb }}'d{{ kind_trailer }}) && ((f & 32'h{{ trl_res }}) == 32'd0);
wire [{{ seq_m1 }}:0] t_seq = f[{{ seq_pos }} +: {{ seq }}];
wire [2:0] t_vc = f[{{ vc_pos }} +: 3];
wire t_head = f[{{ head_pos }}];
wire [{{ tb_m1 }}:0] t_0 = f[{{ tail0_pos }} +: {{ tb }}];
wire [{{ tb_m1 }}:0] t_1 = f[{{ tail1_pos }} +: {{ tb }}];
wire [{{ tb_m1 }}:0] t_2 = f[{{ tail2_pos }} +: {{ tb }}];
// Flits staged (words / words per flit) and whether the words are whole flits.
wire [{{ tb_m1 }}:0] n = {{ n_expr }};
wire [{{ ab_m1 }}:0] n_ab = {{ n_ab_expr }};
wire [{{ cb_m1 }}:0] n_cb = {{ n_cb_expr }};
wire [{{ cb }}:0] n_cb1 = {{ n_cb1_expr }};
wire whole = {{ whole_expr }};
wire u_0 = t_0 != {{ tb }}'d{{ tail_none }};
wire u_1 = t_1 != {{ tb }}'d{{ tail_none }};
wire u_2 = t_2 != {{ tb }}'d{{ tail_none }};
wire tails_ok = (!u_1 || u_0) && (!u_2 || u_1)
    && (!u_0 || (t_0 < n))
    && (!u_1 || ((t_1 < n) && (t_1 > t_0)))
    && (!u_2 || ((t_2 < n) && (t_2 > t_1)));
wire [{{ seq_m1 }}:0] dseq = t_seq - expected;
wire vc_ok = {{ vc_ok_expr }};
wire [{{ vb_m1 }}:0] cvc = {{ cvc_expr }};
wire [{{ hb_m1 }}:0] holdoff1 = (holdoff != {{ hb }}'d0) ? (holdoff - {{ hb }}'d1) : holdoff;
// The descriptor of a frame being committed: flits, head, tail slots.
wire [{{ desc_m1 }}:0] t_desc = {n, t_head, t_0, t_1, t_2};

reg [1:0] state_n;
reg heard_n;
reg peer_v_n;
reg urg_inc;
reg nack_req;
reg clear;
reg stage;
reg poison;
reg commit;
reg inc_frames, inc_crc, inc_ctrl_crc, inc_seq, inc_dup, inc_down, inc_train, inc_over;
reg room;
reg [{{ cb }}:0] held_c;
reg [{{ dab_m1 }}:0] dwr_c;
always @(*) begin
    state_n = state;
    heard_n = heard;
    peer_v_n = 1'b0;
    urg_inc = 1'b0;
    nack_req = 1'b0;
    clear = 1'b0;
    stage = 1'b0;
    poison = 1'b0;
    commit = 1'b0;
    inc_frames = 1'b0;
    inc_crc = 1'b0;
    inc_ctrl_crc = 1'b0;
    inc_seq = 1'b0;
    inc_dup = 1'b0;
    inc_down = 1'b0;
    inc_train = 1'b0;
    inc_over = 1'b0;
    case (cvc)
{%- for v in vs %}
        {{ vb }}'d{{ v }}: held_c = { 1'b0, count_{{ v }} };
{%- endfor %}
        default: held_c = {{ cb1 }}'d0;
    endcase
    case (cvc)
{%- for v in vs %}
        {{ vb }}'d{{ v }}: dwr_c = dwr_{{ v }};
{%- endfor %}
        default: dwr_c = {{ dab }}'d0;
    endcase
    room = (held_c + n_cb1) <= {{ cb1 }}'d{{ rxb }};
    if (!phy_lane_up) begin
        inc_down = (state == 2'd{{ st_up }});
        state_n = 2'd{{ st_down }};
        heard_n = 1'b0;
        clear = 1'b1;
    end else if (state == 2'd{{ st_down }}) begin
        state_n = 2'd{{ st_training }};
        heard_n = 1'b0;
        clear = 1'b1;
    end else if (state == 2'd{{ st_training }}) begin
        if (phy_rx_valid) begin
            if (phy_rx_ctrl && sealed0 && is_trn) begin
                heard_n = 1'b1;
                if (trn_ok) begin
                    state_n = 2'd{{ st_up }};
                    urg_inc = 1'b1;
                end
            end else if (phy_rx_ctrl && sealed0 && is_ctl) begin
                state_n = 2'd{{ st_up }};
                peer_v_n = 1'b1;
                urg_inc = 1'b1;
            end else begin
                inc_train = 1'b1;
            end
        end
    end else if (state == 2'd{{ st_up }} && phy_rx_valid) begin
        if (!phy_rx_ctrl) begin
            if (!poisoned) begin
                if (wcnt == {{ wcb }}'d{{ frame_words }}) begin
                    // Longer than any frame: a lost trailer; drop until the next control word.
                    inc_crc = 1'b1;
                    nack_req = 1'b1;
                    poison = 1'b1;
                end else begin
                    stage = 1'b1;
                end
            end
        end else if (sealed0 && is_ctl) begin
            peer_v_n = 1'b1;
        end else if (sealed0 && is_trn) begin
            urg_inc = 1'b1;
        end else if (wcnt == {{ wcb }}'d0 && !poisoned) begin
            inc_ctrl_crc = 1'b1;
        end else begin
            clear = 1'b1;
            if (!(sealedf && is_trl) || poisoned || !whole || !vc_ok || !tails_ok) begin
                inc_crc = 1'b1;
                nack_req = 1'b1;
            end else if (dseq == {{ seq }}'d0) begin
                if (!room) begin
                    // The sender broke the cable's credit loop: refuse, do not ack.
                    inc_over = 1'b1;
                    nack_req = 1'b1;
                end else begin
                    commit = 1'b1;
                    inc_frames = 1'b1;
                end
            end else if (dseq < {{ seq }}'d{{ seq_half }}) begin
                inc_seq = 1'b1;
                nack_req = 1'b1;
            end else begin
                inc_dup = 1'b1;
                urg_inc = 1'b1;
            end
        end
    end
end

// One flit to the router: credits returned this cycle first.
wire cr_ok = credit_in_valid && (credit_in_vc < 4'd{{ vcs }});
wire [{{ vb_m1 }}:0] cr_vc = {{ crvc_expr }};
reg [{{ rcb_m1 }}:0] cr_have;
reg bad_ack;
{%- for v in vs %}
wire cr_{{ v }} = cr_ok && (cr_vc == {{ vb }}'d{{ v }}) && (rcred_{{ v }} != {{ rcb }}'d{{ rc }});
wire [{{ rcb_m1 }}:0] rc1_{{ v }} = cr_{{ v }} ? (rcred_{{ v }} + {{ rcb }}'d1) : rcred_{{ v }};
wire elig_{{ v }} = (rc1_{{ v }} != {{ rcb }}'d0)
    && ((count_{{ v }} != {{ cb }}'d0) || (commit && (cvc == {{ vb }}'d{{ v }})));
{%- endfor %}
always @(*) begin
    case (cr_vc)
{%- for v in vs %}
        {{ vb }}'d{{ v }}: cr_have = rcred_{{ v }};
{%- endfor %}
        default: cr_have = {{ rcb }}'d0;
    endcase
    bad_ack = cr_ok && (cr_have == {{ rcb }}'d{{ rc }});
end
// Round robin from rr: the first eligible VC in rr, rr+1, ...
reg pick_ok;
reg [{{ vb_m1 }}:0] pick;
always @(*) begin
    pick_ok = 1'b0;
    pick = {{ vb }}'d0;
    case (rr)
{%- for order in rr_orders %}
        {{ vb }}'d{{ loop.index0 }}: begin
{%- for v in order %}
            if (elig_{{ v }}) begin pick_ok = 1'b1; pick = {{ vb }}'d{{ v }}; end
{%- endfor %}
        end
{%- endfor %}
        default: ;
    endcase
end
// The picked VC's current frame: its descriptor (the one being committed
// when the VC holds nothing) and the flit's position in it.
reg [{{ desc_m1 }}:0] cur;
reg [{{ tb_m1 }}:0] ppos;
reg p_empty;
always @(*) begin
    case (pick)
{%- for v in vs %}
        {{ vb }}'d{{ v }}: begin
            p_empty = count_{{ v }} == {{ cb }}'d0;
            ppos = pos_{{ v }};
            cur = desc[{ {{ vb }}'d{{ v }}, drd_{{ v }} }];
        end
{%- endfor %}
        default: begin
            p_empty = 1'b1;
            ppos = {{ tb }}'d0;
            cur = {{ desc_bits }}'d0;
        end
    endcase
    if (p_empty) cur = t_desc;
end
wire [{{ tb_m1 }}:0] c_n = cur[{{ desc_m1 }} -: {{ tb }}];
wire c_head = cur[{{ desc_head }}];
wire [{{ tb_m1 }}:0] c_0 = cur[{{ desc_t0 }} -: {{ tb }}];
wire [{{ tb_m1 }}:0] c_1 = cur[{{ desc_t1 }} -: {{ tb }}];
wire [{{ tb_m1 }}:0] c_2 = cur[{{ tb_m1 }}:0];
wire [{{ tb_m1 }}:0] pprev = ppos - {{ tb }}'d1;
wire p_head = (ppos == {{ tb }}'d0) ? c_head
    : ((c_0 == pprev) || (c_1 == pprev) || (c_2 == pprev));
wire p_tail = (c_0 == ppos) || (c_1 == ppos) || (c_2 == ppos);
wire p_last = (ppos + {{ tb }}'d1) == c_n;

// A whole flit staged this cycle goes to every VC buffer at its tail + index.
wire wr_flit = stage && ({{ wlast_expr }});
wire [{{ ab_m1 }}:0] fidx = n_ab;
wire [{{ w_m1 }}:0] wr_data = {{ wr_data_expr }};
{%- for v in vs %}
wire [{{ ab_m1 }}:0] wa_{{ v }} = tail_{{ v }} + fidx;
wire take_{{ v }} = pick_ok && (pick == {{ vb }}'d{{ v }});
wire put_{{ v }} = commit && (cvc == {{ vb }}'d{{ v }});
{%- endfor %}
// The VC buffers: one write port (the same flit at each VC's own
// address), one synchronous read port (the output register).
{%- for v in vs %}
always @(posedge clock) begin
    if (wr_flit) mem_{{ v }}[wa_{{ v }}] <= wr_data;
    q_{{ v }} <= mem_{{ v }}[rdp_{{ v }}];
end
{%- endfor %}

always @(posedge clock) begin
    if (reset) begin
        state <= 2'd{{ st_down }};
        heard <= 1'b0;
        peer_v <= 1'b0;
        peer_f <= 32'd0;
        ack <= {{ seq }}'d{{ seq_max }};
        nackc <= 8'd0;
        urg <= 8'd0;
        expected <= {{ seq }}'d0;
        holdoff <= {{ hb }}'d0;
        crc <= 32'h{{ crc_init }};
        wcnt <= {{ wcb }}'d0;
        poisoned <= 1'b0;
        rr <= {{ vb }}'d0;
        ovalid <= 1'b0;
        ohead <= 1'b0;
        otail <= 1'b0;
        osel <= {{ vb }}'d0;
        c_frames_received <= 32'd0;
        c_crc_errors <= 32'd0;
        c_ctrl_crc_errors <= 32'd0;
        c_seq_errors <= 32'd0;
        c_duplicates <= 32'd0;
        c_link_downs <= 32'd0;
        c_bad_acks <= 32'd0;
        c_training_errors <= 32'd0;
        c_overflows <= 32'd0;
{%- for v in vs %}
        freed_{{ v }} <= 8'd0;
        tail_{{ v }} <= {{ ab }}'d0;
        rdp_{{ v }} <= {{ ab }}'d0;
        count_{{ v }} <= {{ cb }}'d0;
        dwr_{{ v }} <= {{ dab }}'d0;
        drd_{{ v }} <= {{ dab }}'d0;
        pos_{{ v }} <= {{ tb }}'d0;
        rcred_{{ v }} <= {{ rcb }}'d{{ rc }};
{%- endfor %}
    end else begin
        state <= state_n;
        heard <= heard_n;
        peer_v <= peer_v_n;
        if (peer_v_n) peer_f <= f;
        if (urg_inc) urg <= urg + 8'd1;
        if (nack_req && holdoff1 == {{ hb }}'d0) begin
            nackc <= nackc + 8'd1;
            holdoff <= {{ hb }}'d{{ nack_holdoff }};
        end else begin
            holdoff <= holdoff1;
        end
        if (clear) begin
            wcnt <= {{ wcb }}'d0;
            crc <= 32'h{{ crc_init }};
            poisoned <= 1'b0;
        end else if (poison) begin
            wcnt <= {{ wcb }}'d0;
            poisoned <= 1'b1;
        end else if (stage) begin
            wcnt <= wcnt + {{ wcb }}'d1;
            crc <= crc_word(crc, phy_rx_data);
{%- if wpf > 1 %}
            asm_w <= {{ asm_next_expr }};
{%- endif %}
        end
        if (commit) begin
            ack <= expected;
            expected <= expected + {{ seq }}'d1;
            desc[{cvc, dwr_c}] <= t_desc;
        end
        if (inc_frames) c_frames_received <= c_frames_received + 32'd1;
        if (inc_crc) c_crc_errors <= c_crc_errors + 32'd1;
        if (inc_ctrl_crc) c_ctrl_crc_errors <= c_ctrl_crc_errors + 32'd1;
        if (inc_seq) c_seq_errors <= c_seq_errors + 32'd1;
        if (inc_dup) c_duplicates <= c_duplicates + 32'd1;
        if (inc_down) c_link_downs <= c_link_downs + 32'd1;
        if (inc_train) c_training_errors <= c_training_errors + 32'd1;
        if (inc_over) c_overflows <= c_overflows + 32'd1;
        if (bad_ack) c_bad_acks <= c_bad_acks + 32'd1;
        ovalid <= pick_ok;
        ohead <= p_head;
        otail <= p_tail;
        osel <= pick;
        if (pick_ok) rr <= {{ rr_next_expr }};
{%- for v in vs %}
        rcred_{{ v }} <= take_{{ v }} ? (rc1_{{ v }} - {{ rcb }}'d1) : rc1_{{ v }};
        count_{{ v }} <= (put_{{ v }} ? (count_{{ v }} + n_cb) : count_{{ v }})
            - (take_{{ v }} ? {{ cb }}'d1 : {{ cb }}'d0);
        if (put_{{ v }}) begin
            tail_{{ v }} <= tail_{{ v }} + n_ab;
            dwr_{{ v }} <= dwr_{{ v }} + {{ dab }}'d1;
        end
        if (take_{{ v }}) begin
            rdp_{{ v }} <= rdp_{{ v }} + {{ ab }}'d1;
            freed_{{ v }} <= freed_{{ v }} + 8'd1;
            pos_{{ v }} <= p_last ? {{ tb }}'d0 : (pos_{{ v }} + {{ tb }}'d1);
            if (p_last) drd_{{ v }} <= drd_{{ v }} + {{ dab }}'d1;
        end
{%- endfor %}
    end
end

always @(*) begin
    out_valid = ovalid;
    out_head = ohead;
    out_tail = otail;
    out_vc = { {{ ovc_pad }}'d0, osel };
    case (osel)
{%- for v in vs %}
        {{ vb }}'d{{ v }}: out_data = q_{{ v }};
{%- endfor %}
        default: out_data = {{ flit_bits }}'d0;
    endcase
    st_state = state;
    st_heard = heard;
    st_peer_valid = peer_v;
    st_peer_fields = peer_f;
    st_ack_seq = ack;
    st_nack_count = nackc;
    st_urgent = urg;
    st_freed = { {{ freed_cat }} };
    cnt_frames_received = c_frames_received;
    cnt_crc_errors = c_crc_errors;
    cnt_ctrl_crc_errors = c_ctrl_crc_errors;
    cnt_seq_errors = c_seq_errors;
    cnt_duplicates = c_duplicates;
    cnt_link_downs = c_link_downs;
    cnt_bad_acks = c_bad_acks;
    cnt_training_errors = c_training_errors;
    cnt_overflows = c_overflows;
end
