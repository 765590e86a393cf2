{# ar_sched: the allreduce engine's step sequencer (see allreduce/ar_sched.rs). Phase codes from `c`, widths from `k`. #}
// States.
localparam [2:0] S_IDLE = 3'd0;
localparam [2:0] S_PRE  = 3'd1;
localparam [2:0] S_RED  = 3'd2;
localparam [2:0] S_GW   = 3'd3;
localparam [2:0] S_WALK = 3'd4;
localparam [2:0] S_GATH = 3'd5;
localparam [2:0] S_POST = 3'd6;
localparam [2:0] S_SHOW = 3'd7;

reg [2:0] st;
reg [2:0] after;
reg fin;          // the list is over (after the last SHOW, or bad)
reg bad_q;
reg [{{ k.pw - 1 }}:0] p_q;
reg [{{ k.rw - 1 }}:0] r_q;
reg [{{ k.cw - 1 }}:0] n_q;
reg rsag_q;
reg [{{ k.kw - 1 }}:0] kk;     // K = log2(Q)
reg [{{ k.pw - 1 }}:0] q_q;    // Q = largest power of two <= P
reg host_q;                    // rank < Q and rank + Q < P: receives an extra rank's vector
reg xtra_q;                    // rank >= Q: an extra rank
reg [{{ k.kw - 1 }}:0] lv;     // current level k
reg [{{ k.ow - 1 }}:0] acc;    // this rank's layout offset of its next receive range
// Segments held after each halving step, and prefix sums of their lengths.
reg [{{ k.cw - 1 }}:0] seg_lo [0:{{ k.depth - 1 }}];
reg [{{ k.cw - 1 }}:0] seg_hi [0:{{ k.depth - 1 }}];
reg [{{ k.ow - 1 }}:0] pre [0:{{ k.depth - 1 }}];
// Walk of the partner's halving chain (gather steps).
reg [{{ k.cw - 1 }}:0] wl;
reg [{{ k.ow - 1 }}:0] wsum;
reg [{{ k.kw - 1 }}:0] wb;
// The step presented.
reg [{{ k.xw - 1 }}:0] o_index;
reg [1:0] o_phase;
reg [{{ k.rw - 1 }}:0] o_partner;
reg [{{ k.cw - 1 }}:0] o_send_lo;
reg [{{ k.cw - 1 }}:0] o_send_hi;
reg [{{ k.cw - 1 }}:0] o_recv_lo;
reg [{{ k.cw - 1 }}:0] o_recv_hi;
reg o_combine;
reg [{{ k.ow - 1 }}:0] o_my_off;
reg [{{ k.ow - 1 }}:0] o_their_off;
reg [11:0] o_pdig;

// The partner's digits in the box (x fastest, 4 bits each: extents are
// 1..=16), without a division: this rank's digits `rdig` plus or minus
// those of the rank distance, with the box's mixed-radix carries. The
// distance is 2^lv in a reduce / gather step (`pw`, the digits of 2^lv,
// doubled when lv goes up and halved when it goes down) and Q in a pre /
// post step (`qdig`, held by the caller). Registered with the step.
reg [3:0] pw_x;
reg [3:0] pw_y;
reg [3:0] pw_z;
// The digits of 1 (the extents of 1 skipped).
wire [3:0] one_x = ex == 5'd1 ? 4'd0 : 4'd1;
wire [3:0] one_y = (ex == 5'd1 && ey != 5'd1) ? 4'd1 : 4'd0;
wire [3:0] one_z = (ex == 5'd1 && ey == 5'd1) ? 4'd1 : 4'd0;
// 2 · pw (taken only while 2^(lv+1) < Q <= P: the digits stay in range).
wire [5:0] dbx = {1'b0, pw_x, 1'b0};
wire       dbx_c = dbx >= {1'b0, ex};
wire [5:0] dbx_n = dbx_c ? dbx - {1'b0, ex} : dbx;
wire [5:0] dby = {1'b0, pw_y, 1'b0} + {5'd0, dbx_c};
wire       dby_c = dby >= {1'b0, ey};
wire [5:0] dby_n = dby_c ? dby - {1'b0, ey} : dby;
wire [5:0] dbz = {1'b0, pw_z, 1'b0} + {5'd0, dby_c};
// pw / 2 (taken only for lv >= 1: 2^lv is even).
wire [5:0] hvy = {2'd0, pw_y} + (pw_z[0] ? {1'b0, ey} : 6'd0);
wire [5:0] hvx = {2'd0, pw_x} + (hvy[0] ? {1'b0, ex} : 6'd0);
// rdig ± the distance.
wire       use_q = st == S_PRE || st == S_POST;
wire [11:0] dstep = use_q ? qdig : {pw_z, pw_y, pw_x};
wire       dsub = use_q ? xtra_q : (r_q & ({{ k.rw }}'d1 << lv)) != {{ k.rw }}'d0;
wire [5:0] pax = {2'd0, rdig[3:0]} + {2'd0, dstep[3:0]};
wire       pax_c = pax >= {1'b0, ex};
wire [5:0] pax_n = pax_c ? pax - {1'b0, ex} : pax;
wire [5:0] pay = {2'd0, rdig[7:4]} + {2'd0, dstep[7:4]} + {5'd0, pax_c};
wire       pay_c = pay >= {1'b0, ey};
wire [5:0] pay_n = pay_c ? pay - {1'b0, ey} : pay;
wire [5:0] paz = {2'd0, rdig[11:8]} + {2'd0, dstep[11:8]} + {5'd0, pay_c};
wire       psx_b = rdig[3:0] < dstep[3:0];
wire [5:0] psx = {2'd0, rdig[3:0]} - {2'd0, dstep[3:0]} + (psx_b ? {1'b0, ex} : 6'd0);
wire [5:0] psy0 = {2'd0, rdig[7:4]} - {2'd0, dstep[7:4]} - {5'd0, psx_b};
wire       psy_b = psy0[5];
wire [5:0] psy = psy_b ? psy0 + {1'b0, ey} : psy0;
wire [5:0] psz = {2'd0, rdig[11:8]} - {2'd0, dstep[11:8]} - {5'd0, psy_b};
wire [11:0] pdig_c = dsub ? {psz[3:0], psy[3:0], psx[3:0]} : {paz[3:0], pay_n[3:0], pax_n[3:0]};

// Start: K from the rank count's most significant bit, and the checks.
reg [{{ k.kw - 1 }}:0] msb;
integer i;
always @(*) begin
    msb = {{ k.kw }}'d0;
    for (i = 0; i <= {{ k.kmax }}; i = i + 1)
        if (ranks[i]) msb = i[{{ k.kw - 1 }}:0];
end
wire [{{ k.pw - 1 }}:0] q_in = {{ k.pw }}'d1 << msb;
wire [{{ k.pw - 1 }}:0] rank_in = { {{- k.pw - k.rw }}'d0, rank};
wire bad_in = ranks == {{ k.pw }}'d0 || ranks > {{ k.pw }}'d{{ k.max_ranks }} || rank_in >= ranks;
wire xtra_in = rank_in >= q_in;
wire host_in = !xtra_in && rank_in + q_in < ranks;
wire [{{ k.cw - 1 }}:0] zero_c = {{ k.cw }}'d0;
wire [{{ k.ow - 1 }}:0] n_wide = { {{- k.ow - k.cw }}'d0, n_q};

wire [{{ k.rw - 1 }}:0] lv_mask = {{ k.rw }}'d1 << lv;
// The level's partner, and whether it receives an extra rank's vector.
wire [{{ k.rw - 1 }}:0] partner = r_q ^ lv_mask;
wire [{{ k.pw - 1 }}:0] partner_wide = { {{- k.pw - k.rw }}'d0, partner};
wire pextra = partner_wide + q_q < p_q;
wire [{{ k.ow - 1 }}:0] shift_off = (host_q ? acc - n_wide : acc) + (pextra ? n_wide : {{ k.ow }}'d0);
wire my_bit = (r_q & lv_mask) != {{ k.rw }}'d0;

// Halving (level lv): keep / give halves of seg[lv].
wire [{{ k.cw - 1 }}:0] cur_lo = seg_lo[lv];
wire [{{ k.cw - 1 }}:0] cur_hi = seg_hi[lv];
wire [{{ k.cw - 1 }}:0] half = (cur_hi - cur_lo) >> 1;
wire [{{ k.cw - 1 }}:0] mid = cur_lo + half;
wire [{{ k.cw - 1 }}:0] keep_lo = my_bit ? mid : cur_lo;
wire [{{ k.cw - 1 }}:0] keep_hi = my_bit ? cur_hi : mid;
wire [{{ k.cw - 1 }}:0] give_lo = my_bit ? cur_lo : mid;
wire [{{ k.cw - 1 }}:0] give_hi = my_bit ? mid : cur_hi;
wire [{{ k.ow - 1 }}:0] keep_len = { {{- k.ow - k.cw }}'d0, keep_hi - keep_lo};

// Gathering (level lv): mine = seg[lv+1] inside parent = seg[lv]; theirs the other part.
wire [{{ k.kw - 1 }}:0] lv1 = lv + {{ k.kw }}'d1;
wire [{{ k.cw - 1 }}:0] mine_lo = seg_lo[lv1];
wire [{{ k.cw - 1 }}:0] mine_hi = seg_hi[lv1];
wire [{{ k.cw - 1 }}:0] theirs_lo = mine_lo == cur_lo ? mine_hi : cur_lo;
wire [{{ k.cw - 1 }}:0] theirs_hi = mine_lo == cur_lo ? cur_hi : mine_lo;
wire [{{ k.cw - 1 }}:0] theirs_len = theirs_hi - theirs_lo;
wire [{{ k.ow - 1 }}:0] theirs_wide = { {{- k.ow - k.cw }}'d0, theirs_len};
// The partner's chain: the same bits as this rank's above lv.
wire [{{ k.rw - 1 }}:0] wb_mask = {{ k.rw }}'d1 << wb;
wire [{{ k.cw - 1 }}:0] wl_next = (r_q & wb_mask) != {{ k.rw }}'d0 ? wl - (wl >> 1) : wl >> 1;
wire [{{ k.ow - 1 }}:0] wl_wide = { {{- k.ow - k.cw }}'d0, wl};
wire [{{ k.ow - 1 }}:0] wl_next_wide = { {{- k.ow - k.cw }}'d0, wl_next};

// Where the reduce phase goes next.
wire [2:0] after_reduce = (rsag_q && kk != {{ k.kw }}'d0) ? S_GW : host_q ? S_POST : S_IDLE;
wire [{{ k.kw - 1 }}:0] kk_m1 = kk - {{ k.kw }}'d1;
wire [{{ k.xw - 1 }}:0] kk_x = { {{- k.xw - k.kw }}'d0, kk};
wire [{{ k.xw - 1 }}:0] lv_x = { {{- k.xw - k.kw }}'d0, lv};

always @(posedge clock) begin
    if (reset) begin
        st <= S_IDLE;
        fin <= 1'b0;
        bad_q <= 1'b0;
    end else if (start) begin
        p_q <= ranks;
        r_q <= rank;
        n_q <= count;
        rsag_q <= rsag;
        kk <= msb;
        q_q <= q_in;
        host_q <= host_in;
        xtra_q <= xtra_in;
        lv <= {{ k.kw }}'d0;
        pw_x <= one_x;
        pw_y <= one_y;
        pw_z <= one_z;
        acc <= {{ k.ow }}'d0;
        seg_lo[0] <= zero_c;
        seg_hi[0] <= count;
        pre[0] <= {{ k.ow }}'d0;
        bad_q <= bad_in;
        fin <= bad_in;
        st <= bad_in ? S_IDLE
            : (xtra_in || host_in) ? S_PRE
            : msb != {{ k.kw }}'d0 ? S_RED
            : S_IDLE;
        if (!bad_in && !xtra_in && !host_in && msb == {{ k.kw }}'d0) fin <= 1'b1;
    end else begin
        case (st)
        S_PRE: begin
            o_index <= {{ k.xw }}'d0;
            o_phase <= {{ c.pre }};
            o_combine <= host_q;
            o_partner <= xtra_q ? r_q - q_q[{{ k.rw - 1 }}:0] : r_q + q_q[{{ k.rw - 1 }}:0];
            o_send_lo <= zero_c;
            o_send_hi <= xtra_q ? n_q : zero_c;
            o_recv_lo <= zero_c;
            o_recv_hi <= host_q ? n_q : zero_c;
            o_my_off <= {{ k.ow }}'d0;
            o_their_off <= {{ k.ow }}'d0;
            o_pdig <= pdig_c;
            acc <= host_q ? n_wide : {{ k.ow }}'d0;
            after <= xtra_q ? S_POST : kk != {{ k.kw }}'d0 ? S_RED : after_reduce;
            st <= S_SHOW;
        end
        S_RED: begin
            o_index <= lv_x + {{ k.xw }}'d1;
            o_phase <= {{ c.reduce }};
            o_combine <= 1'b1;
            o_partner <= partner;
            o_my_off <= acc;
            o_their_off <= shift_off;
            o_pdig <= pdig_c;
            if (rsag_q) begin
                o_send_lo <= give_lo;
                o_send_hi <= give_hi;
                o_recv_lo <= keep_lo;
                o_recv_hi <= keep_hi;
                acc <= acc + keep_len;
                seg_lo[lv1] <= keep_lo;
                seg_hi[lv1] <= keep_hi;
                pre[lv1] <= pre[lv] + keep_len;
            end else begin
                o_send_lo <= zero_c;
                o_send_hi <= n_q;
                o_recv_lo <= zero_c;
                o_recv_hi <= n_q;
                acc <= acc + n_wide;
            end
            if (lv1 < kk) begin
                lv <= lv1;
                pw_x <= dbx_n[3:0];
                pw_y <= dby_n[3:0];
                pw_z <= dbz[3:0];
                after <= S_RED;
            end else begin
                lv <= kk_m1;
                after <= after_reduce;
            end
            st <= S_SHOW;
        end
        S_GW: begin
            wl <= theirs_len;
            wsum <= theirs_wide;
            wb <= lv1;
            st <= S_WALK;
        end
        S_WALK: begin
            if (wb < kk) begin
                wl <= wl_next;
                wsum <= wsum + wl_next_wide;
                wb <= wb + {{ k.kw }}'d1;
            end else begin
                st <= S_GATH;
            end
        end
        S_GATH: begin
            o_index <= kk_x + kk_x - lv_x;
            o_phase <= {{ c.gather }};
            o_combine <= 1'b0;
            o_partner <= partner;
            o_send_lo <= mine_lo;
            o_send_hi <= mine_hi;
            o_recv_lo <= theirs_lo;
            o_recv_hi <= theirs_hi;
            o_my_off <= acc;
            o_their_off <= (pextra ? n_wide : {{ k.ow }}'d0) + pre[lv] + wsum + theirs_wide - wl_wide;
            o_pdig <= pdig_c;
            acc <= acc + theirs_wide;
            if (lv != {{ k.kw }}'d0) begin
                lv <= lv - {{ k.kw }}'d1;
                pw_x <= hvx[4:1];
                pw_y <= hvy[4:1];
                pw_z <= {1'b0, pw_z[3:1]};
                after <= S_GW;
            end else begin
                after <= host_q ? S_POST : S_IDLE;
            end
            st <= S_SHOW;
        end
        S_POST: begin
            o_index <= kk_x + (rsag_q ? kk_x : {{ k.xw }}'d0) + {{ k.xw }}'d1;
            o_phase <= {{ c.post }};
            o_combine <= 1'b0;
            o_partner <= xtra_q ? r_q - q_q[{{ k.rw - 1 }}:0] : r_q + q_q[{{ k.rw - 1 }}:0];
            o_send_lo <= zero_c;
            o_send_hi <= host_q ? n_q : zero_c;
            o_recv_lo <= zero_c;
            o_recv_hi <= xtra_q ? n_q : zero_c;
            o_my_off <= acc;
            o_their_off <= {{ k.ow }}'d0;
            o_pdig <= pdig_c;
            acc <= xtra_q ? acc + n_wide : acc;
            after <= S_IDLE;
            st <= S_SHOW;
        end
        S_SHOW: begin
            if (next) begin
                st <= after;
                if (after == S_IDLE) fin <= 1'b1;
            end
        end
        default: ;
        endcase
    end
end

always @(*) begin
    valid = st == S_SHOW;
    done = st == S_IDLE && fin;
    bad = bad_q;
    index = o_index;
    phase = o_phase;
    partner_rank = o_partner;
    send_lo = o_send_lo;
    send_hi = o_send_hi;
    recv_lo = o_recv_lo;
    recv_hi = o_recv_hi;
    combine = o_combine;
    my_off = o_my_off;
    their_off = o_their_off;
    total = acc;
    partner_dig = o_pdig;
end
// Bits of the digit arithmetic above a digit's 4 (zero by the ranges noted).
wire unused_ar_sched_dig = &{1'b0, dbx_n[5:4], dby_n[5:4], dbz[5:4], hvx[5], hvx[0], hvy[5], pax_n[5:4], pay_n[5:4],
    paz[5:4], psx[5:4], psy[5:4], psz[5:4]};
