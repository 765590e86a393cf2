{# ar_check: the allreduce engine's registers and descriptor check (see allreduce/ar_check.rs). Every offset, field and code comes from `k`, rendered from the golden definitions. #}
// Communicator slots: the registers as written (masked as the golden NI
// keeps them), plus what an ENABLE derives once: the rank count and
// whether this node sits at the slot's rank. The arrays hold the
// configured slots (rounded up to a power of two, {{ k.ns }}), indexed by
// the low {{ k.sx }} bits of a slot number; a slot past the last is never
// written, and one whose high bits are set is refused by `q_in` / `fq_in`.
reg [31:0] s_origin [0:{{ k.ns - 1 }}];
reg [31:0] s_extent [0:{{ k.ns - 1 }}];
reg [31:0] s_rank   [0:{{ k.ns - 1 }}];
reg [31:0] s_ctrl   [0:{{ k.ns - 1 }}];
reg [31:0] s_slo    [0:{{ k.ns - 1 }}];
reg [31:0] s_shi    [0:{{ k.ns - 1 }}];
reg [31:0] s_ssize  [0:{{ k.ns - 1 }}];
reg [12:0] s_ranks  [0:{{ k.ns - 1 }}];
reg        s_member [0:{{ k.ns - 1 }}];
// The collective sequence number of each slot (golden `Slot::seq`): zero
// at every AR_CTRL write taken, advanced when a collective that passed the
// check completes (`seq_adv`).
reg [13:0] s_seq    [0:{{ k.ns - 1 }}];
// This node's digits in the slot's box, {z, y, x} (its offsets from the
// origin modulo the torus), taken with an AR_CTRL write: the partner's
// digits are this rank's plus or minus the step's distance (`ar_sched`).
reg [11:0] s_rdig   [0:{{ k.ns - 1 }}];
reg [31:0] thr_q;
reg [31:0] tmo_q;

// ---- register write ----
localparam [1:0] S_IDLE = 2'd0;
localparam [1:0] S_Q    = 2'd1;
localparam [1:0] S_W    = 2'd2;
reg [1:0] st;

wire       w_algn  = wr_addr[1:0] == 2'd0;
wire       w_comm  = w_algn && wr_addr >= {{ k.a_comm }} && wr_addr < {{ k.a_comm_end }};
wire [11:0] w_rel  = wr_addr - {{ k.a_comm }};
wire [3:0] w_slot  = w_rel{{ k.slot_bits }};
wire [2:0] w_field = w_rel{{ k.field_bits }};
wire [{{ k.sx - 1 }}:0] w_si = w_slot[{{ k.sx - 1 }}:0];
wire       w_en    = s_ctrl[w_si][31];
wire [4:0] w_ox = {1'b0, s_origin[w_si][3:0]};
wire [4:0] w_oy = {1'b0, s_origin[w_si][7:4]};
wire [4:0] w_oz = {1'b0, s_origin[w_si][11:8]};
wire [4:0] w_ex = s_extent[w_si][4:0];
wire [4:0] w_ey = s_extent[w_si][12:8];
wire [4:0] w_ez = s_extent[w_si][20:16];
wire [14:0] w_ranks = {10'd0, w_ex} * {10'd0, w_ey} * {10'd0, w_ez};
wire w_box_ok = w_ex != 5'd0 && w_ex <= {{ k.dim[0] }} && w_ox < {{ k.dim[0] }}
             && w_ey != 5'd0 && w_ey <= {{ k.dim[1] }} && w_oy < {{ k.dim[1] }}
             && w_ez != 5'd0 && w_ez <= {{ k.dim[2] }} && w_oz < {{ k.dim[2] }};
wire w_rank_ok = {3'd0, s_rank[w_si][11:0]} < w_ranks;
wire [43:0] w_scr_end = {2'd0, s_shi[w_si][9:0], s_slo[w_si]} + {12'd0, s_ssize[w_si]};
wire w_scr_ok = w_scr_end <= (44'd1 << {{ k.ab }});
// This node's rank in the box, where it is inside (rank_of of the golden box).
wire [4:0] me_x = {1'b0, node{{ k.me[0] }}};
wire [4:0] me_y = {1'b0, node{{ k.me[1] }}};
wire [4:0] me_z = {1'b0, node{{ k.me[2] }}};
wire [4:0] off_x = me_x >= w_ox ? me_x - w_ox : me_x + {{ k.dim[0] }} - w_ox;
wire [4:0] off_y = me_y >= w_oy ? me_y - w_oy : me_y + {{ k.dim[1] }} - w_oy;
wire [4:0] off_z = me_z >= w_oz ? me_z - w_oz : me_z + {{ k.dim[2] }} - w_oz;
wire [14:0] me_rank = ({10'd0, off_z} * {10'd0, w_ey} + {10'd0, off_y}) * {10'd0, w_ex} + {10'd0, off_x};
wire w_member = off_x < w_ex && off_y < w_ey && off_z < w_ez && me_rank == {3'd0, s_rank[w_si][11:0]};

reg wr_ok_c;
always @(*) begin
    wr_ok_c = 1'b0;
    if (st == S_IDLE && w_algn) begin
        if (wr_addr == {{ k.a_thr }} || wr_addr == {{ k.a_tmo }}) wr_ok_c = 1'b1;
        // AR_CTRL of the slot a collective runs on is refused (golden
        // `set_communicator`); other fields of it are, as it is enabled.
        else if (w_comm && w_field == 3'd{{ k.f_ctrl }})
            wr_ok_c = !(run_on && w_slot == q_comm) && (!wr_data[31] || (w_box_ok && w_rank_ok && w_scr_ok));
        else if (w_comm && w_field != 3'd7) wr_ok_c = !w_en;
    end
    wr_ok = wr_ok_c;
end

// ---- register read ----
wire       r_comm  = rd_addr[1:0] == 2'd0 && rd_addr >= {{ k.a_comm }} && rd_addr < {{ k.a_comm_end }};
wire [11:0] r_rel  = rd_addr - {{ k.a_comm }};
wire [3:0] r_slot  = r_rel{{ k.slot_bits }};
wire [2:0] r_field = r_rel{{ k.field_bits }};
wire [{{ k.sx - 1 }}:0] r_si = r_slot[{{ k.sx - 1 }}:0];
always @(*) begin
    rd_ok = 1'b1;
    rd_data = 32'd0;
    if (rd_addr == {{ k.a_thr }}) rd_data = thr_q;
    else if (rd_addr == {{ k.a_tmo }}) rd_data = tmo_q;
    else if (r_comm) begin
        case (r_field)
            3'd{{ k.f_origin }}: rd_data = s_origin[r_si];
            3'd{{ k.f_extent }}: rd_data = s_extent[r_si];
            3'd{{ k.f_rank }}: rd_data = s_rank[r_si];
            3'd{{ k.f_ctrl }}: rd_data = s_ctrl[r_si];
            3'd{{ k.f_slo }}: rd_data = s_slo[r_si];
            3'd{{ k.f_shi }}: rd_data = s_shi[r_si];
            3'd{{ k.f_ssize }}: rd_data = s_ssize[r_si];
            default: rd_ok = 1'b0;
        endcase
    end else rd_ok = 1'b0;
end

integer i;
always @(posedge clock) begin
    if (reset) begin
        for (i = 0; i < {{ k.ns }}; i = i + 1) begin
            s_origin[i] <= 32'd0;
            s_extent[i] <= 32'd0;
            s_rank[i] <= 32'd0;
            s_ctrl[i] <= 32'd0;
            s_slo[i] <= 32'd0;
            s_shi[i] <= 32'd0;
            s_ssize[i] <= 32'd0;
            s_ranks[i] <= 13'd0;
            s_member[i] <= 1'b0;
            s_seq[i] <= 14'd0;
            s_rdig[i] <= 12'd0;
        end
        thr_q <= {{ k.thr_reset }};
        tmo_q <= 32'd0;
    end else if (wr && wr_ok_c) begin
        if (wr_addr == {{ k.a_thr }}) thr_q <= wr_data;
        else if (wr_addr == {{ k.a_tmo }}) tmo_q <= wr_data;
        else begin
            case (w_field)
                3'd{{ k.f_origin }}: s_origin[w_si] <= wr_data & {{ k.masks[k.f_origin] }};
                3'd{{ k.f_extent }}: s_extent[w_si] <= wr_data & {{ k.masks[k.f_extent] }};
                3'd{{ k.f_rank }}: s_rank[w_si] <= wr_data & {{ k.masks[k.f_rank] }};
                3'd{{ k.f_slo }}: s_slo[w_si] <= wr_data & {{ k.masks[k.f_slo] }};
                3'd{{ k.f_shi }}: s_shi[w_si] <= wr_data & {{ k.masks[k.f_shi] }};
                3'd{{ k.f_ssize }}: s_ssize[w_si] <= wr_data & {{ k.masks[k.f_ssize] }};
                default: begin
                    s_ctrl[w_si] <= wr_data & {{ k.masks[k.f_ctrl] }};
                    s_ranks[w_si] <= w_ranks[12:0];
                    s_member[w_si] <= w_member;
                    s_seq[w_si] <= 14'd0;
                    s_rdig[w_si] <= {off_z[3:0], off_y[3:0], off_x[3:0]};
                end
            endcase
        end
    end
    // Never on the slot an AR_CTRL write above takes: a collective's slot
    // refuses AR_CTRL while it runs, and a single rank's copy completes
    // while the NI holds its AXI4-Lite slave.
    if (!reset && seq_adv) s_seq[q_si] <= s_seq[q_si] + 14'd1;
end

// ---- descriptor check ----
reg  [2:0] q_op;
reg  [2:0] q_dtype;
reg [31:0] q_count;
reg [41:0] q_src;
reg [41:0] q_dst;
reg  [3:0] q_comm;
reg [15:0] q_pdid;
reg        done_q;
reg  [2:0] status_q;
// The checked slot's box, registered when the check starts (`S_Q`) for
// the collective's walk (`run`), which follows the check at once: its
// registers cannot change meanwhile (the NI holds its AXI4-Lite slave
// during the check; then the slot is enabled, so only AR_CTRL could be
// written, and that is refused on the running slot).
reg  [4:0] q_ex;
reg  [4:0] q_ey;
reg [11:0] q_rd;
reg [11:0] q_org;
// The checked slot's index into the arrays, and whether it is a slot of
// this NI's at all (else BAD_COMM, as a slot never enabled).
wire [{{ k.sx - 1 }}:0] q_si = q_comm[{{ k.sx - 1 }}:0];
wire q_in = {{ k.inr("q_comm") }};
wire [{{ k.sx - 1 }}:0] fq_si = fq_comm[{{ k.sx - 1 }}:0];
wire fq_in = {{ k.inr("fq_comm") }};
reg [12:0] q_p;
// The digits of Q, the largest power of two <= P (`ar_sched`'s distance
// of the pre / post step): doubled from those of 1 once per cycle of the
// check's walk (`S_W`) while 2 · `q_dp` <= P. That takes K = log2 Q
// cycles; the check ends only once it is over (`!q_dbl`), so `q_dq` is
// final at `done` and so at `run`. Most walks take longer anyway (2 or
// more cycles per reduce step, K of them), but an extra rank's list is
// its pre and post steps only: without the wait, a box of 112 ranks
// (Q = 64) gave rank 99 the partner 99 - 32 (found by the `ar_check`
// bench's walk of the collective's steps).
reg [12:0] q_dp;
reg [11:0] q_dq;
wire [4:0] q_ex_s = s_extent[q_si][4:0];
wire [4:0] q_ey_s = s_extent[q_si][12:8];
wire [5:0] qdx = {1'b0, q_dq[3:0], 1'b0};
wire       qdx_c = qdx >= {1'b0, q_ex};
wire [5:0] qdx_n = qdx_c ? qdx - {1'b0, q_ex} : qdx;
wire [5:0] qdy = {1'b0, q_dq[7:4], 1'b0} + {5'd0, qdx_c};
wire       qdy_c = qdy >= {1'b0, q_ey};
wire [5:0] qdy_n = qdy_c ? qdy - {1'b0, q_ey} : qdy;
wire [5:0] qdz = {1'b0, q_dq[11:8], 1'b0} + {5'd0, qdy_c};
wire       q_dbl = {q_dp, 1'b0} <= {1'b0, q_p};

reg [1:0] q_e;   // log2 of the element bytes
always @(*) begin
    case (q_dtype)
{%- for (code, e) in k.esize %}
        {{ code }}: q_e = 2'd{{ e }};
{%- endfor %}
        default: q_e = 2'd0;
    endcase
end
reg q_legal;
always @(*) begin
    case ({q_op, q_dtype})
        {% for l in k.legal %}{% if !loop.first %}, {% endif %}{{ l }}{% endfor %}: q_legal = 1'b1;
        default: q_legal = 1'b0;
    endcase
end
wire [34:0] q_bytes = {3'd0, q_count} << q_e;
// A slot past the last one is never enabled (its registers are unmapped).
wire q_comm_ok = q_in && s_ctrl[q_si][31] && s_ctrl[q_si][15:0] == q_pdid;
wire q_count_bad = q_count == 32'd0 || q_bytes > {{ k.maxv }};
wire [38:0] q_need = {3'd0, sched$total} << q_e;
wire q_scr_bad = q_need > {8'd0, s_ssize[q_si][31:1]};
wire [43:0] q_lim = 44'd1 << {{ k.ab }};
wire [2:0] q_emask = q_e == 2'd3 ? 3'd7 : q_e == 2'd2 ? 3'd3 : q_e == 2'd1 ? 3'd1 : 3'd0;
wire q_src_bad = (q_src[2:0] & q_emask) != 3'd0 || {2'd0, q_src} + {9'd0, q_bytes} > q_lim;
wire q_dst_bad = (q_dst[2:0] & q_emask) != 3'd0 || {2'd0, q_dst} + {9'd0, q_bytes} > q_lim;

always @(*) begin
    sched$clock = clock;
    sched$reset = reset;
    sched$start = (st == S_Q && q_comm_ok && s_member[q_si] && q_legal && !q_count_bad) || run;
    sched$ranks = s_ranks[q_si];
    sched$rank = s_rank[q_si][11:0];
    sched$count = q_count;
    sched$rsag = q_bytes > {3'd0, thr_q};
    sched$next = run_on ? run_next : 1'b1;
    sched$ex = q_ex;
    sched$ey = q_ey;
    sched$rdig = q_rd;
    sched$qdig = q_dq;
    busy = st != S_IDLE;
    done = done_q;
    status = status_q;
    one = s_ranks[q_si] == 13'd1;
    bytes = q_bytes[30:0];
    src = q_src;
    dst = q_dst;
    st_valid = sched$valid;
    st_done = sched$done;
    st_index = sched$index;
    st_send_lo = sched$send_lo;
    st_send_hi = sched$send_hi;
    st_recv_empty = sched$recv_lo == sched$recv_hi;
    st_their_off = sched$their_off;
    st_recv_lo = sched$recv_lo;
    st_recv_hi = sched$recv_hi;
    st_combine = sched$combine;
    st_my_off = sched$my_off;
    st_partner = {p_dx, p_dy, p_dz};
    run_scratch = {s_shi[q_si][9:0], s_slo[q_si]};
    run_half = s_ssize[q_si][31:1];
    run_pdid = s_ctrl[q_si][15:0];
    run_seq = s_seq[q_si];
    run_comm = q_comm;
    run_op = q_op;
    run_dtype = q_dtype;
    run_e = q_e;
    timeout = (wr && wr_ok_c && wr_addr == {{ k.a_tmo }}) ? wr_data : tmo_q;
    // The receive path's look-up of a fragment's slot (the NI checks it).
    // A slot past the arrays reads as never enabled (its other fields are
    // then not used by the NI).
    fq_ctrl = fq_in ? s_ctrl[fq_si] : 32'd0;
    fq_origin = s_origin[fq_si][11:0];
    fq_extent = s_extent[fq_si][20:0];
    fq_seq = s_seq[fq_si];
    fq_scratch = {s_shi[fq_si][9:0], s_slo[fq_si]};
    fq_ssize = s_ssize[fq_si];
    // An AR_CTRL write taken: the slot's receive records start again
    // (golden `set_communicator` makes fresh banks).
    clr = wr && wr_ok_c && w_comm && w_field == 3'd{{ k.f_ctrl }};
    clr_slot = w_slot;
end

// The partner's coordinates (golden `CommBox::coords_of`): the rank's
// digits in the box (x fastest; registered by the sequencer with the
// step, no division), each added to the origin modulo the torus.
wire [3:0] p_dx = sched$partner_dig[3:0];
wire [3:0] p_dy = sched$partner_dig[7:4];
wire [3:0] p_dz = sched$partner_dig[11:8];
wire [4:0] p_sx = {1'b0, q_org[3:0]} + {1'b0, p_dx};
wire [4:0] p_sy = {1'b0, q_org[7:4]} + {1'b0, p_dy};
wire [4:0] p_sz = {1'b0, q_org[11:8]} + {1'b0, p_dz};
wire [4:0] p_x = p_sx >= {{ k.dim[0] }} ? p_sx - {{ k.dim[0] }} : p_sx;
wire [4:0] p_y = p_sy >= {{ k.dim[1] }} ? p_sy - {{ k.dim[1] }} : p_sy;
wire [4:0] p_z = p_sz >= {{ k.dim[2] }} ? p_sz - {{ k.dim[2] }} : p_sz;
always @(*) begin
    st_dest = node;
    st_dest{{ k.me[0] }} = p_x[3:0];
    st_dest{{ k.me[1] }} = p_y[3:0];
    st_dest{{ k.me[2] }} = p_z[3:0];
end

always @(posedge clock) begin
    done_q <= 1'b0;
    if (reset) begin
        st <= S_IDLE;
        status_q <= {{ k.st_ok }};
    end else begin
        case (st)
            S_IDLE: if (chk) begin
                q_op <= d_op;
                q_dtype <= d_dtype;
                q_count <= d_count;
                q_src <= d_src;
                q_dst <= d_dst;
                q_comm <= d_comm;
                q_pdid <= d_pdid;
                st <= S_Q;
            end
            S_Q: begin
                q_ex <= q_ex_s;
                q_ey <= q_ey_s;
                q_rd <= s_rdig[q_si];
                q_org <= s_origin[q_si][11:0];
                q_p <= s_ranks[q_si];
                q_dp <= 13'd1;
                q_dq <= {q_ex_s == 5'd1 && q_ey_s == 5'd1 ? 4'd1 : 4'd0,
                         q_ex_s == 5'd1 && q_ey_s != 5'd1 ? 4'd1 : 4'd0,
                         q_ex_s == 5'd1 ? 4'd0 : 4'd1};
                if (sched$start) st <= S_W;
                else begin
                    st <= S_IDLE;
                    done_q <= 1'b1;
                    if (!q_comm_ok) status_q <= {{ k.st_bad_comm }};
                    else if (!s_member[q_si]) status_q <= {{ k.st_not_member }};
                    else if (!q_legal) status_q <= {{ k.st_bad_type }};
                    else status_q <= {{ k.st_bad_count }};
                end
            end
            default: begin
              if (q_dbl) begin
                q_dp <= {q_dp[11:0], 1'b0};
                q_dq <= {qdz[3:0], qdy_n[3:0], qdx_n[3:0]};
              end
              if (sched$done && !q_dbl) begin
                st <= S_IDLE;
                done_q <= 1'b1;
                if (q_scr_bad) status_q <= {{ k.st_bad_count }};
                else if (q_src_bad || q_dst_bad) status_q <= {{ k.st_bad_addr }};
                else status_q <= {{ k.st_ok }};
              end
            end
        endcase
    end
end

// Not used: the sequencer's phase, and its `bad` (the rank count of an enabled slot never exceeds the torus);
// `bytes` above 2^30 (refused BAD_COUNT, never copied).
// Of the steps, the collective's sending uses the partner, the send range
// and where it lands; the digits are below 16 (the extents' range).
// The partner's rank: its digits come from the sequencer (`partner_dig`).
// The doubling's bits above a digit's 4 are zero while 2 · q_dp < P; at
// 2 · q_dp = P (P a power of two) the digits of P are never used: such a
// box has no pre / post step.
wire unused_ar_check = &{1'b0, node, sched$bad, sched$phase, sched$partner_rank,
    qdx_n[5:4], qdy_n[5:4], qdz[5:4],
    p_x[4], p_y[4], p_z[4],
    s_ssize[q_si][0], w_ranks[14:13], me_rank, q_bytes[34:31], w_rel, r_rel{{ k.unused_hi }}};
