// link_tx: generated from hdl/templates/link/link_tx.v ({{ flit_bits }}-bit flits, {{ vcs }} VCs).
// A transcription of the golden model exanet_sim::link::link_tx, cycle for cycle:
// its `tick` is the combinational block below, in the same order (ctrl, timer,
// enqueue, flush step, word slot); every state variable is a register.
// Field positions, constants and CRC matrices come from the golden model.
//
// The CRC field of a sealed control word: register `s`, then the 4 field bytes, final xor.
function [31:0] seal_f;
    input [31:0] s;
    input [31:0] f;
    begin
{%- for r in seal_rows %}
        seal_f[{{ loop.index0 }}] = ^(s & 32'h{{ r.0 }}) ^ ^(f & 32'h{{ r.1 }}) ^ 1'b{{ r.2 }};
{%- endfor %}
    end
endfunction
// ---- state ----
reg        out_valid;
// The PHY word register: a word built here (`out_word`) or, when `sel_q`,
// the replay word, which the retry buffer's block RAM registers itself.
reg [63:0] out_word;
reg        out_wctrl;
reg        sel_q;
reg        cr_valid;
reg [2:0]  cr_vc;
reg [1:0]  prev_st;
(* ram_style = "distributed" *)
reg [{{ qw_m1 }}:0] qmem [0:{{ qdepth_all_m1 }}];
reg [{{ vcs_qa_m1 }}:0] qrd;
reg [{{ vcs_qa_m1 }}:0] qwr;
reg [{{ vcs_qc_m1 }}:0] qcnt;
reg [{{ vcs8_m1 }}:0] sent;
reg [{{ vcs8_m1 }}:0] peer_freed;
reg [{{ vcs8_m1 }}:0] last_freed;
reg [{{ seq_m1 }}:0] next_seq;
reg [{{ seq_m1 }}:0] acked;
reg        f_open;
reg [2:0]  f_vc;
reg        f_head;
reg [{{ seq_m1 }}:0] f_n;
reg [{{ tails_m1 }}:0] f_tails;
reg [1:0]  f_ntails;
reg        f_last_tail;
reg [31:0] f_crc;
reg        cur_valid;
{%- if wpf > 1 %}
// Words 1.. of the flit being sent (word 0 went out when it was taken).
reg [{{ rest_m1 }}:0] cur_data;
{%- endif %}
reg [1:0]  cur_k;
reg        rewind;
reg        flushing;
reg [{{ tw_m1 }}:0] timer;
reg [2:0]  rr;
reg [{{ seq_m1 }}:0] last_ack;
reg [7:0]  last_nack;
reg [7:0]  last_urgent;
reg        force_ctrl;
reg [{{ sw_m1 }}:0] since;
reg [2:0]  slot_rr;
reg [31:0] c_frames_sent;
reg [31:0] c_retransmissions;
reg [31:0] c_timeouts;
reg [31:0] c_bad_acks;
reg [31:0] c_overflows;
reg [31:0] c_words_replayed;
reg [31:0] c_ctrl_sent;
initial out_valid = 1'b0;
initial out_word = 64'd0;
initial out_wctrl = 1'b0;
initial sel_q = 1'b0;
initial cr_valid = 1'b0;
initial cr_vc = 3'd0;
initial prev_st = 2'd{{ st_down }};
initial qrd = {{ vcs_qa }}'d0;
initial qwr = {{ vcs_qa }}'d0;
initial qcnt = {{ vcs_qc }}'d0;
initial sent = {{ vcs8 }}'d0;
initial peer_freed = {{ vcs8 }}'d0;
initial last_freed = {{ vcs8 }}'d0;
initial next_seq = {{ seq }}'d0;
initial acked = {{ seq }}'d{{ seq_max }};
initial f_open = 1'b0;
initial f_vc = 3'd0;
initial f_head = 1'b0;
initial f_n = {{ seq }}'d0;
initial f_tails = {{ tails_w }}'d0;
initial f_ntails = 2'd0;
initial f_last_tail = 1'b0;
initial f_crc = 32'h{{ crc_init }};
initial cur_valid = 1'b0;
{%- if wpf > 1 %}
initial cur_data = {{ rest_bits }}'d0;
{%- endif %}
initial cur_k = 2'd0;
initial rewind = 1'b0;
initial flushing = 1'b0;
initial timer = {{ tw }}'d0;
initial rr = 3'd0;
initial last_ack = {{ seq }}'d{{ seq_max }};
initial last_nack = 8'd0;
initial last_urgent = 8'd0;
initial force_ctrl = 1'b0;
initial since = {{ sw }}'d0;
initial slot_rr = 3'd0;
initial c_frames_sent = 32'd0;
initial c_retransmissions = 32'd0;
initial c_timeouts = 32'd0;
initial c_bad_acks = 32'd0;
initial c_overflows = 32'd0;
initial c_words_replayed = 32'd0;
initial c_ctrl_sent = 32'd0;
// ---- stage 1: the peer's control word, and the ack and stop given to the retry buffer ----
reg        leaving;
reg        pc_ok;
reg        entering;
reg        pc_nack;
reg [{{ seq_m1 }}:0] pc_ack;
reg [2:0]  pc_vc_a;
reg [7:0]  pc_fr_a;
reg [2:0]  pc_vc_b;
reg [7:0]  pc_fr_b;
always @(*) begin
    leaving = (st_state != 2'd{{ st_up }}) && (prev_st == 2'd{{ st_up }});
    entering = (st_state == 2'd{{ st_up }}) && (prev_st != 2'd{{ st_up }});
    // A control word's kind and reserved bits as the golden Control::pack sets them.
    pc_ok = st_peer_valid && ((st_peer_fields & 32'h{{ c_rsv_mask }}) == 32'h{{ c_base }});
    pc_nack = st_peer_fields[{{ c_nack }}];
    pc_ack = st_peer_fields[{{ c_ack_hi }}:{{ c_ack }}];
    pc_vc_a = st_peer_fields[{{ c_vca_hi }}:{{ c_vca }}];
    pc_fr_a = st_peer_fields[{{ c_fra_hi }}:{{ c_fra }}];
    pc_vc_b = st_peer_fields[{{ c_vcb_hi }}:{{ c_vcb }}];
    pc_fr_b = st_peer_fields[{{ c_frb_hi }}:{{ c_frb }}];
    retry$clock = clock;
    retry$reset = reset;
    retry$ack_valid = pc_ok && (pc_ack != acked);
    retry$ack_seq = pc_ack;
    retry$stop = leaving;
end
// The word on the PHY (registered either way).
reg [63:0] out_data;
reg        out_ctrl;
always @(*) begin
    out_data = sel_q ? retry$replay_data : out_word;
    out_ctrl = sel_q ? retry$replay_ctrl : out_wctrl;
end
// ---- stage 2: the golden tick (after the retry buffer's ack) ----
integer v;
integer v2;
reg        taken;
reg        out_valid_n;
reg [63:0] word_n;
reg        word_ctrl_n;
reg        sel_replay;
reg        cr_valid_n;
reg [2:0]  cr_vc_n;
reg [{{ vcs_qa_m1 }}:0] qrd_n;
reg [{{ vcs_qa_m1 }}:0] qwr_n;
reg [{{ vcs_qc_m1 }}:0] qcnt_n;
reg [{{ vcs8_m1 }}:0] sent_n;
reg [{{ vcs8_m1 }}:0] peer_freed_n;
reg [{{ vcs8_m1 }}:0] last_freed_n;
reg [{{ seq_m1 }}:0] next_seq_n;
reg [{{ seq_m1 }}:0] acked_n;
reg        f_open_n;
reg [2:0]  f_vc_n;
reg        f_head_n;
reg [{{ seq_m1 }}:0] f_n_n;
reg [{{ tails_m1 }}:0] f_tails_n;
reg [1:0]  f_ntails_n;
reg        f_last_tail_n;
reg [31:0] f_crc_n;
// The CRC register a data word is folded into (the frame's, or the init value).
reg [31:0] crc_s;
reg        cur_valid_n;
{%- if wpf > 1 %}
reg [{{ rest_m1 }}:0] cur_data_n;
{%- endif %}
reg [1:0]  cur_k_n;
reg        rewind_n;
reg        flushing_n;
reg [{{ tw_m1 }}:0] timer_n;
reg [2:0]  rr_n;
reg [{{ seq_m1 }}:0] last_ack_n;
reg [7:0]  last_nack_n;
reg [7:0]  last_urgent_n;
reg        force_ctrl_n;
reg [{{ sw_m1 }}:0] since_n;
reg [2:0]  slot_rr_n;
reg [31:0] c_frames_sent_n;
reg [31:0] c_retransmissions_n;
reg [31:0] c_timeouts_n;
reg [31:0] c_bad_acks_n;
reg [31:0] c_overflows_n;
reg [31:0] c_words_replayed_n;
reg [31:0] c_ctrl_sent_n;
// Increments this cycle (at most 3, for bad acks): one adder per counter.
reg [1:0]  i_frames_sent;
reg [1:0]  i_retransmissions;
reg [1:0]  i_timeouts;
reg [1:0]  i_bad_acks;
reg [1:0]  i_overflows;
reg [1:0]  i_words_replayed;
reg [1:0]  i_ctrl_sent;
// enqueue
reg        enq;
reg [{{ qaddr_m1 }}:0] enq_addr;
// helpers
reg [7:0]  d8;
reg [7:0]  u8;
reg [7:0]  fr;
reg [2:0]  cvc;
reg        hold;
reg        slot;
reg        due;
reg [7:0]  most;
reg        ackd;
// With one VC the rank bits of a key are never compared (nothing to compare with).
/* verilator lint_off UNUSED */
reg [{{ keys_m1 }}:0] keys;
/* verilator lint_on UNUSED */
reg        won;
reg        top1;
reg        top2;
reg [3:0]  rot4;
reg [7:0]  fra;
reg [7:0]  frb;
reg [{{ qa_m1 }}:0] fptr;
reg [{{ qa_m1 }}:0] wptr;
reg        flush_tr;
reg        crc_upd;
reg [2:0]  ca;
reg [2:0]  cb;
reg [3:0]  ssum;
reg [31:0] cfields;
reg [31:0] tfields;
reg        do_take;
reg        do_trailer;
reg [2:0]  tvc;
reg [{{ flit_m1 }}:0] tdata;
reg        thead;
reg        ttail;
reg        tnonempty;
reg        found;
reg [2:0]  nvc;
reg [3:0]  cand;
reg [{{ qaddr_m1 }}:0] front_addr;
reg [{{ qw_m1 }}:0] front;
reg [63:0] dword;
reg        follows;
always @(*) begin
    taken = out_valid && phy_tx_ready;
    out_valid_n = out_valid;
    word_n = out_data;
    word_ctrl_n = out_ctrl;
    sel_replay = 1'b0;
    cr_valid_n = 1'b0;
    cr_vc_n = 3'd0;
    qrd_n = qrd;
    qwr_n = qwr;
    qcnt_n = qcnt;
    sent_n = sent;
    peer_freed_n = peer_freed;
    last_freed_n = last_freed;
    next_seq_n = next_seq;
    acked_n = acked;
    f_open_n = f_open;
    f_vc_n = f_vc;
    f_head_n = f_head;
    f_n_n = f_n;
    f_tails_n = f_tails;
    f_ntails_n = f_ntails;
    f_last_tail_n = f_last_tail;
    f_crc_n = f_crc;
    cur_valid_n = cur_valid;
{%- if wpf > 1 %}
    cur_data_n = cur_data;
{%- endif %}
    cur_k_n = cur_k;
    rewind_n = rewind;
    flushing_n = flushing;
    timer_n = timer;
    rr_n = rr;
    last_ack_n = last_ack;
    last_nack_n = last_nack;
    last_urgent_n = last_urgent;
    force_ctrl_n = force_ctrl;
    since_n = since;
    slot_rr_n = slot_rr;
    i_frames_sent = 2'd0;
    i_retransmissions = 2'd0;
    i_timeouts = 2'd0;
    i_bad_acks = 2'd0;
    i_overflows = 2'd0;
    i_words_replayed = 2'd0;
    i_ctrl_sent = 2'd0;
    retry$start = 1'b0;
    retry$take = 1'b0;
    retry$push_valid = 1'b0;
    retry$push_data = 64'd0;
    retry$push_ctrl = 1'b0;
    retry$close_valid = 1'b0;
    retry$close_seq = next_seq;
    enq = 1'b0;
    enq_addr = {{ qaddr_bits }}'d0;
    d8 = 8'd0;
    u8 = 8'd0;
    fr = 8'd0;
    cvc = 3'd0;
    due = 1'b0;
    most = 8'd0;
    ackd = 1'b0;
    keys = {{ keys_bits }}'d0;
    won = 1'b0;
    top1 = 1'b0;
    top2 = 1'b0;
    rot4 = 4'd0;
    fra = 8'd0;
    frb = 8'd0;
    fptr = {{ qa }}'d0;
    wptr = {{ qa }}'d0;
    flush_tr = 1'b0;
    crc_upd = 1'b0;
    ca = 3'd0;
    cb = 3'd0;
    ssum = 4'd0;
    cfields = 32'd0;
    tfields = 32'd0;
    do_take = 1'b0;
    do_trailer = 1'b0;
    tvc = 3'd0;
    tdata = {{ flit_bits }}'d0;
    thead = 1'b0;
    ttail = 1'b0;
    tnonempty = 1'b0;
    found = 1'b0;
    nvc = 3'd0;
    cand = 4'd0;
    front_addr = {{ qaddr_bits }}'d0;
    front = {{ qw }}'d0;
    dword = 64'd0;
    follows = 1'b0;
    // Link state changes.
    if (leaving) begin
        flushing_n = f_open;
        out_valid_n = 1'b0;
        rewind_n = 1'b0;
    end
    if (entering) begin
        if ((retry$frames != {{ seq }}'d0) || flushing_n) begin
            rewind_n = 1'b1;
            i_retransmissions = i_retransmissions + 2'd1;
        end
        force_ctrl_n = 1'b1;
        timer_n = {{ tw }}'d0;
        out_valid_n = 1'b0;
    end
    // The peer's control word: ack, nack, two credit slots.
    if (pc_ok) begin
        if (pc_ack != acked) begin
            if (retry$ack_ok) begin
                acked_n = pc_ack;
                timer_n = {{ tw }}'d0;
            end else begin
                i_bad_acks = i_bad_acks + 2'd1;
            end
        end
        if (pc_nack && (retry$frames_left != {{ seq }}'d0) && !rewind_n) begin
            rewind_n = 1'b1;
            i_retransmissions = i_retransmissions + 2'd1;
        end
        for (v = 0; v < 2; v = v + 1) begin
            cvc = (v == 0) ? pc_vc_a : pc_vc_b;
            fr = (v == 0) ? pc_fr_a : pc_fr_b;
            if ({1'b0, cvc} >= 4'd{{ vcs }}) begin
                i_bad_acks = i_bad_acks + 2'd1;
            end else begin
                for (v2 = 0; v2 < {{ vcs }}; v2 = v2 + 1) begin
                    if (cvc == v2[2:0]) begin
                        d8 = fr - peer_freed_n[v2 * 8 +: 8];
                        u8 = sent_n[v2 * 8 +: 8] - peer_freed_n[v2 * 8 +: 8];
                        if (d8 <= u8) peer_freed_n[v2 * 8 +: 8] = fr;
                        else i_bad_acks = i_bad_acks + 2'd1;
                    end
                end
            end
        end
    end
    since_n = (since == {{ sw }}'d{{ since_max }}) ? since : since + {{ sw }}'d1;
    // Retransmit timeout.
    if ((st_state == 2'd{{ st_up }}) && (retry$frames_left != {{ seq }}'d0) && !retry$replaying && !rewind_n) begin
        timer_n = timer_n + {{ tw }}'d1;
        if (timer_n >= {{ tw }}'d{{ timeout }}) begin
            timer_n = {{ tw }}'d0;
            rewind_n = 1'b1;
            i_timeouts = i_timeouts + 2'd1;
            i_retransmissions = i_retransmissions + 2'd1;
        end
    end else if (retry$frames_left == {{ seq }}'d0) begin
        timer_n = {{ tw }}'d0;
    end
    // A flit from the router into its VC's buffer.
    if (in_valid) begin
        if (in_vc < 4'd{{ vcs }}) begin
            for (v = 0; v < {{ vcs }}; v = v + 1) begin
                if (in_vc[2:0] == v[2:0]) begin
                    if (qcnt[v * {{ qc }} +: {{ qc }}] < {{ qc }}'d{{ txb }}) begin
                        enq = 1'b1;
                        wptr = qwr[v * {{ qa }} +: {{ qa }}];
                        enq_addr = {{ enq_addr_expr }};
                        qwr_n[v * {{ qa }} +: {{ qa }}] = (qwr[v * {{ qa }} +: {{ qa }}] == {{ qa }}'d{{ txb_m1 }}) ? {{ qa }}'d0 : qwr[v * {{ qa }} +: {{ qa }}] + {{ qa }}'d1;
                        qcnt_n[v * {{ qc }} +: {{ qc }}] = qcnt[v * {{ qc }} +: {{ qc }}] + {{ qc }}'d1;
                    end else begin
                        i_overflows = i_overflows + 2'd1;
                    end
                end
            end
        end else begin
            i_overflows = i_overflows + 2'd1;
        end
    end
    // Closing a frame after a drop: one word per cycle.
    slot = 1'b1;
    if (flushing_n) begin
        if (cur_valid) begin
            {{ cur_word }}
            retry$push_valid = 1'b1;
            retry$push_data = dword;
            crc_upd = 1'b1;
            cur_valid_n = ({1'b0, cur_k} + 3'd1 < 3'd{{ wpf }});
            cur_k_n = cur_k + 2'd1;
        end else begin
            do_trailer = 1'b1;
            flush_tr = 1'b1;
            flushing_n = 1'b0;
        end
        if (st_state == 2'd{{ st_up }}) slot = 1'b0;
    end
    hold = out_valid_n && !taken;
    if (slot && !hold) begin
        if (st_state == 2'd{{ st_train }}) begin
            out_valid_n = 1'b1;
            word_n = st_heard ? 64'h{{ train_ok }} : 64'h{{ train_no }};
            word_ctrl_n = 1'b1;
        end else if (st_state != 2'd{{ st_up }}) begin
            out_valid_n = 1'b0;
        end else begin
            out_valid_n = 1'b1;
            // 1. a control word, when due
            ackd = (st_ack_seq != last_ack);
            // The two credit slots: each VC's key is {flits freed since last
            // sent, its place in the rotation from slot_rr (first = highest)};
            // keys differ, so the two largest are the golden choice (most
            // freed, ties in rotating order). Each pair is compared once
            // (`won` of the higher index is the complement).
            for (v = 0; v < {{ vcs }}; v = v + 1) begin
                rot4 = v[3:0] + 4'd{{ vcs }} - {1'b0, slot_rr};
                if (rot4 >= 4'd{{ vcs }}) rot4 = rot4 - 4'd{{ vcs }};
                keys[v * 11 +: 11] = {st_freed[v * 8 +: 8] - last_freed[v * 8 +: 8], 3'd{{ vcs_m1 }} - rot4[2:0]};
            end
            for (v = 0; v < {{ vcs }}; v = v + 1) begin
                top1 = 1'b1;
                for (v2 = 0; v2 < {{ vcs }}; v2 = v2 + 1) begin
                    if (v2 != v) begin
                        if (v2 > v) won = keys[v * 11 +: 11] > keys[v2 * 11 +: 11];
                        else won = !(keys[v2 * 11 +: 11] > keys[v * 11 +: 11]);
                        top1 = top1 && won;
                    end
                end
                if (top1) ca = v[2:0];
            end
            cb = ca;
            for (v = 0; v < {{ vcs }}; v = v + 1) begin
                top2 = (v[2:0] != ca);
                for (v2 = 0; v2 < {{ vcs }}; v2 = v2 + 1) begin
                    if ((v2 != v) && (v2[2:0] != ca)) begin
                        if (v2 > v) won = keys[v * 11 +: 11] > keys[v2 * 11 +: 11];
                        else won = !(keys[v2 * 11 +: 11] > keys[v * 11 +: 11]);
                        top2 = top2 && won;
                    end
                end
                if (top2) cb = v[2:0];
            end
            for (v = 0; v < {{ vcs }}; v = v + 1) begin
                if (ca == v[2:0]) most = keys[v * 11 + 3 +: 8];
            end
            due = force_ctrl_n || (st_nack_count != last_nack) || (st_urgent != last_urgent)
                || ((since_n >= {{ sw }}'d{{ ack_interval }}) && (ackd || {{ batch_cmp }}))
                || ((since_n >= {{ sw }}'d{{ refresh }}) && (ackd || (most != 8'd0)))
                || (since_n >= {{ sw }}'d{{ keepalive }});
            if (due) begin
                for (v = 0; v < {{ vcs }}; v = v + 1) begin
                    if (ca == v[2:0]) fra = st_freed[v * 8 +: 8];
                    if (cb == v[2:0]) frb = st_freed[v * 8 +: 8];
                end
                cfields = 32'h{{ c_base }};
                cfields[{{ c_nack }}] = (st_nack_count != last_nack);
                cfields[{{ c_ack_hi }}:{{ c_ack }}] = st_ack_seq;
                cfields[{{ c_vca_hi }}:{{ c_vca }}] = ca;
                cfields[{{ c_fra_hi }}:{{ c_fra }}] = fra;
                cfields[{{ c_vcb_hi }}:{{ c_vcb }}] = cb;
                cfields[{{ c_frb_hi }}:{{ c_frb }}] = frb;
                word_n = {cfields, seal_f(32'h{{ crc_init }}, cfields)};
                word_ctrl_n = 1'b1;
                last_ack_n = st_ack_seq;
                for (v = 0; v < {{ vcs }}; v = v + 1) begin
                    if (ca == v[2:0]) last_freed_n[v * 8 +: 8] = fra;
                    if (cb == v[2:0]) last_freed_n[v * 8 +: 8] = frb;
                end
                last_nack_n = st_nack_count;
                last_urgent_n = st_urgent;
                force_ctrl_n = 1'b0;
                since_n = {{ sw }}'d0;
                ssum = {1'b0, slot_rr} + 4'd2;
                if (ssum >= 4'd{{ vcs }}) ssum = ssum - 4'd{{ vcs }};
                if (ssum >= 4'd{{ vcs }}) ssum = ssum - 4'd{{ vcs }};
                slot_rr_n = ssum[2:0];
                i_ctrl_sent = i_ctrl_sent + 2'd1;
            end else if (retry$replaying) begin
                // 2. a replay word
                i_words_replayed = i_words_replayed + 2'd1;
                retry$take = 1'b1;
                sel_replay = 1'b1;
            end else if (cur_valid) begin
                // 3. the next word of the current flit
                {{ cur_word }}
                retry$push_valid = 1'b1;
                retry$push_data = dword;
                crc_upd = 1'b1;
                cur_valid_n = ({1'b0, cur_k} + 3'd1 < 3'd{{ wpf }});
                cur_k_n = cur_k + 2'd1;
                word_n = dword;
                word_ctrl_n = 1'b0;
            end else if (f_open) begin
                // 4. the next flit of the open frame, or its trailer
                tvc = f_vc;
                do_take = 1'b1;
            end else begin
                if (rewind_n) begin
                    rewind_n = 1'b0;
                    timer_n = {{ tw }}'d0;
                    retry$start = 1'b1;
                    if (retry$frames_left != {{ seq }}'d0) begin
                        i_words_replayed = i_words_replayed + 2'd1;
                        retry$take = 1'b1;
                        sel_replay = 1'b1;
                    end
                end
                if (!sel_replay) begin
                    // 5. a new frame
                    if ((retry$frames_left >= {{ seq }}'d{{ max_outstanding }}) || (retry$used_left >= {{ used_bits }}'d{{ room_limit }})) begin
                        out_valid_n = 1'b0;
                    end else begin
                        found = 1'b0;
                        for (v = 0; v < {{ vcs }}; v = v + 1) begin
                            cand = {1'b0, rr} + v[3:0];
                            if (cand >= 4'd{{ vcs }}) cand = cand - 4'd{{ vcs }};
                            tnonempty = 1'b0;
                            for (v2 = 0; v2 < {{ vcs }}; v2 = v2 + 1) begin
                                if (cand[2:0] == v2[2:0]) begin
                                    tnonempty = (qcnt_n[v2 * {{ qc }} +: {{ qc }}] != {{ qc }}'d0)
                                        && ((sent_n[v2 * 8 +: 8] - peer_freed_n[v2 * 8 +: 8]) < 8'd{{ rxb }});
                                end
                            end
                            if (!found && tnonempty) begin
                                found = 1'b1;
                                nvc = cand[2:0];
                            end
                        end
                        if (found) begin
                            ssum = {1'b0, nvc} + 4'd1;
                            if (ssum >= 4'd{{ vcs }}) ssum = ssum - 4'd{{ vcs }};
                            rr_n = ssum[2:0];
                            tvc = nvc;
                            do_take = 1'b1;
                        end else begin
                            out_valid_n = 1'b0;
                        end
                    end
                end
            end
        end
    end
    // The front flit of VC tvc (this cycle's enqueue bypassed when it was empty).
    for (v = 0; v < {{ vcs }}; v = v + 1) begin
        if (tvc == v[2:0]) fptr = qrd[v * {{ qa }} +: {{ qa }}];
    end
    front_addr = {{ front_addr_expr }};
    front = qmem[front_addr];
    for (v = 0; v < {{ vcs }}; v = v + 1) begin
        if (tvc == v[2:0]) begin
            if (qcnt[v * {{ qc }} +: {{ qc }}] == {{ qc }}'d0) front = {in_head, in_tail, in_data};
            tnonempty = (qcnt_n[v * {{ qc }} +: {{ qc }}] != {{ qc }}'d0);
            u8 = sent_n[v * 8 +: 8] - peer_freed_n[v * 8 +: 8];
        end
    end
    thead = front[{{ qw_m1 }}];
    ttail = front[{{ qw_m2 }}];
    tdata = front[{{ flit_m1 }}:0];
    if (do_take && f_open) begin
        follows = !rewind_n && (f_n < {{ seq }}'d{{ frame_flits }}) && (f_ntails != 2'd{{ tail_slots }})
            && (u8 < 8'd{{ rxb }}) && (retry$used_left < {{ used_bits }}'d{{ room_limit }})
            && tnonempty && (thead == f_last_tail);
        if (!follows) begin
            do_take = 1'b0;
            do_trailer = 1'b1;
        end
    end
    if (do_take) begin
        if (!f_open) begin
            f_open_n = 1'b1;
            f_vc_n = tvc;
            f_head_n = thead;
            f_n_n = {{ seq }}'d0;
            f_tails_n = {{ tails_w }}'h{{ tails_none }};
            f_ntails_n = 2'd0;
            f_last_tail_n = 1'b0;
            f_crc_n = 32'h{{ crc_init }};
        end
        for (v = 0; v < {{ vcs }}; v = v + 1) begin
            if (tvc == v[2:0]) begin
                qrd_n[v * {{ qa }} +: {{ qa }}] = (qrd[v * {{ qa }} +: {{ qa }}] == {{ qa }}'d{{ txb_m1 }}) ? {{ qa }}'d0 : qrd[v * {{ qa }} +: {{ qa }}] + {{ qa }}'d1;
                qcnt_n[v * {{ qc }} +: {{ qc }}] = qcnt_n[v * {{ qc }} +: {{ qc }}] - {{ qc }}'d1;
                sent_n[v * 8 +: 8] = sent_n[v * 8 +: 8] + 8'd1;
            end
        end
        cr_valid_n = 1'b1;
        cr_vc_n = tvc;
        if (ttail) begin
            for (v = 0; v < {{ tail_slots }}; v = v + 1) begin
                if (f_ntails_n == v[1:0]) f_tails_n[({{ tail_slots_m1 }} - v) * {{ seq }} +: {{ seq }}] = f_n_n;
            end
            f_ntails_n = f_ntails_n + 2'd1;
        end
        f_last_tail_n = ttail;
        f_n_n = f_n_n + {{ seq }}'d1;
        cur_valid_n = {{ multi_word }};
{%- if wpf > 1 %}
        cur_data_n = tdata[{{ flit_m1 }}:64];
{%- endif %}
        cur_k_n = 2'd1;
        dword = tdata[63:0];
        retry$push_valid = 1'b1;
        retry$push_data = dword;
        crc_upd = 1'b1;
        word_n = dword;
        word_ctrl_n = 1'b0;
    end
    // One CRC-32 step per cycle over the data word pushed (`crc_nx`, below;
    // a new frame's register starts at the init value set above).
    crc_s = f_crc_n;
    if (do_trailer) begin
        tfields = 32'h{{ t_base }};
        tfields[{{ t_seq_hi }}:{{ t_seq }}] = next_seq;
        tfields[{{ t_vc_hi }}:{{ t_vc }}] = f_vc;
        tfields[{{ t_head }}] = f_head;
        tfields[{{ t_ta_hi }}:{{ t_ta }}] = f_tails[{{ tails_m1 }}:{{ tails_a_lo }}];
        tfields[{{ t_tb_hi }}:{{ t_tb }}] = f_tails[{{ tails_a_lo_m1 }}:{{ seq }}];
        tfields[{{ t_tc_hi }}:{{ t_tc }}] = f_tails[{{ seq_m1 }}:0];
        dword = {tfields, seal_f(f_crc, tfields)};
        retry$push_valid = 1'b1;
        retry$push_data = dword;
        retry$push_ctrl = 1'b1;
        retry$close_valid = 1'b1;
        retry$close_seq = next_seq;
        next_seq_n = next_seq + {{ seq }}'d1;
        i_frames_sent = i_frames_sent + 2'd1;
        f_open_n = 1'b0;
        if (!flush_tr) begin
            word_n = dword;
            word_ctrl_n = 1'b1;
        end
    end
    // The counters: every increment of the cycle in one add.
    c_frames_sent_n = c_frames_sent + {30'd0, i_frames_sent};
    c_retransmissions_n = c_retransmissions + {30'd0, i_retransmissions};
    c_timeouts_n = c_timeouts + {30'd0, i_timeouts};
    c_bad_acks_n = c_bad_acks + {30'd0, i_bad_acks};
    c_overflows_n = c_overflows + {30'd0, i_overflows};
    c_words_replayed_n = c_words_replayed + {30'd0, i_words_replayed};
    c_ctrl_sent_n = c_ctrl_sent + {30'd0, i_ctrl_sent};
end
// CRC-32 of one 64-bit data word (8 bytes, little-endian) into `crc_s`: the
// golden crc_word as a shared XOR network (hdl/src/link/xor_net.rs); `keep`
// holds each at-most-6-input wire as one LUT (without it ABC maps this step
// to about twice the LUTs).
wire [31:0] crc_nx;
{%- for w in crc_wires %}
(* keep *) wire {{ w.0 }} = {{ w.1 }};
{%- endfor %}
{%- for o in crc_outs %}
assign crc_nx[{{ loop.index0 }}] = {{ o }};
{%- endfor %}
// The retry buffer's before-ack `used` and `oldest` are for its own bench;
// link_tx decides from the after-ack outputs, so these are left unread (safe:
// they are plain outputs with no side effect).
/* verilator lint_off UNUSED */
wire unused_retry = &{1'b0, retry$used, retry$oldest, retry$replay_valid};
/* verilator lint_on UNUSED */
// ---- outputs (registered) ----
always @(*) begin
    phy_tx_valid = out_valid;
    phy_tx_data = out_data;
    phy_tx_ctrl = out_ctrl;
    credit_out_valid = cr_valid;
    credit_out_vc = {1'b0, cr_vc};
    cnt_frames_sent = c_frames_sent;
    cnt_retransmissions = c_retransmissions;
    cnt_timeouts = c_timeouts;
    cnt_bad_acks = c_bad_acks;
    cnt_overflows = c_overflows;
    cnt_words_replayed = c_words_replayed;
    cnt_ctrl_sent = c_ctrl_sent;
end
always @(posedge clock) begin
    if (enq) qmem[enq_addr] <= {in_head, in_tail, in_data};
    if (reset) begin
        out_valid <= 1'b0;
        // The word shown is held (as before the replay word moved to block RAM).
        out_word <= out_data;
        out_wctrl <= out_ctrl;
        sel_q <= 1'b0;
        cr_valid <= 1'b0;
        prev_st <= 2'd{{ st_down }};
        qrd <= {{ vcs_qa }}'d0;
        qwr <= {{ vcs_qa }}'d0;
        qcnt <= {{ vcs_qc }}'d0;
        sent <= {{ vcs8 }}'d0;
        peer_freed <= {{ vcs8 }}'d0;
        last_freed <= {{ vcs8 }}'d0;
        next_seq <= {{ seq }}'d0;
        acked <= {{ seq }}'d{{ seq_max }};
        f_open <= 1'b0;
        cur_valid <= 1'b0;
        rewind <= 1'b0;
        flushing <= 1'b0;
        timer <= {{ tw }}'d0;
        rr <= 3'd0;
        last_ack <= {{ seq }}'d{{ seq_max }};
        last_nack <= 8'd0;
        last_urgent <= 8'd0;
        force_ctrl <= 1'b0;
        since <= {{ sw }}'d0;
        slot_rr <= 3'd0;
        c_frames_sent <= 32'd0;
        c_retransmissions <= 32'd0;
        c_timeouts <= 32'd0;
        c_bad_acks <= 32'd0;
        c_overflows <= 32'd0;
        c_words_replayed <= 32'd0;
        c_ctrl_sent <= 32'd0;
    end else begin
        out_valid <= out_valid_n;
        out_word <= word_n;
        out_wctrl <= word_ctrl_n;
        sel_q <= sel_replay;
        cr_valid <= cr_valid_n;
        cr_vc <= cr_vc_n;
        prev_st <= st_state;
        qrd <= qrd_n;
        qwr <= qwr_n;
        qcnt <= qcnt_n;
        sent <= sent_n;
        peer_freed <= peer_freed_n;
        last_freed <= last_freed_n;
        next_seq <= next_seq_n;
        acked <= acked_n;
        f_open <= f_open_n;
        f_vc <= f_vc_n;
        f_head <= f_head_n;
        f_n <= f_n_n;
        f_tails <= f_tails_n;
        f_ntails <= f_ntails_n;
        f_last_tail <= f_last_tail_n;
        f_crc <= crc_upd ? crc_nx : f_crc_n;
        cur_valid <= cur_valid_n;
{%- if wpf > 1 %}
        cur_data <= cur_data_n;
{%- endif %}
        cur_k <= cur_k_n;
        rewind <= rewind_n;
        flushing <= flushing_n;
        timer <= timer_n;
        rr <= rr_n;
        last_ack <= last_ack_n;
        last_nack <= last_nack_n;
        last_urgent <= last_urgent_n;
        force_ctrl <= force_ctrl_n;
        since <= since_n;
        slot_rr <= slot_rr_n;
        c_frames_sent <= c_frames_sent_n;
        c_retransmissions <= c_retransmissions_n;
        c_timeouts <= c_timeouts_n;
        c_bad_acks <= c_bad_acks_n;
        c_overflows <= c_overflows_n;
        c_words_replayed <= c_words_replayed_n;
        c_ctrl_sent <= c_ctrl_sent_n;
    end
end
