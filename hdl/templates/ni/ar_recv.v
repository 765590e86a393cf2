{# ar_recv: the allreduce fragments the receive path takes (see ni/allreduce.rs, "Receiving"): the golden `Engine::accept` checks in `FragReject` order against the slot (the `ar_check` child's look-up) and the step's receive record, the record updated and the fragment written to scratch by rdma_rx's write burst. Every code, field and limit comes from the golden definitions through the render keys. #}
// ---- allreduce: fragments received (golden `Engine::accept`) ----
// A fragment that passed the NI's checks (rdma_rx: ECC, CRCs, destination,
// class, 1 <= size <= P) is checked here in the golden order: its
// communicator enabled (Comm), the slot's PDID (Pdid), txid the slot's
// sequence number or the next (Stale), the source in the box on this
// board (Source), the step index below the step limit (Step), vaddr +
// size inside half the scratch area (Range), then against the step's
// receive record of bank txid[0]: index below the next or the step closed
// (Duplicate), above it (Gap), a source other than the step's first
// fragment's (Mixed). `af_rej` is the `FragReject` code (0: accepted),
// `af_ni` the NI reason it is reported with (golden `fragment_reason`).
//
// Receive records (golden `StepRx`), one per slot, bank and step, at
// {slot, bank, step}: {next index, bytes, closed, the source's offsets in
// the box (x, y, z: its rank's digits), op and dtype bits of the footer's
// user field}; a record is zero until its valid bit is set, and a bank's
// valid bits clear at once when its collective ends (`seq_adv`: the golden
// `finish`), a slot's when an AR_CTRL write is taken (`clr`).
(* ram_style = "distributed" *)
reg [{{ rw - 1 }}:0] af_rec [0:{{ rn - 1 }}];
reg [{{ rn - 1 }}:0] af_v;
reg [{{ rn - 1 }}:0] af_vn;
reg  [3:0] af_c;
reg  [{{ iw - 1 }}:0] af_idx;
reg [{{ rw - 1 }}:0] af_r;
reg [14:0] af_nidx;
reg [31:0] af_bytes;
reg        af_closed;
reg [11:0] af_rsrc;
reg  [5:0] af_ox;
reg  [5:0] af_oy;
reg  [5:0] af_oz;
reg [11:0] af_src;
reg        af_inbox;
reg [43:0] af_end;
reg [13:0] af_seqn;
reg        af_cur;
reg  [3:0] af_rej;
reg  [3:0] af_ni;
reg [41:0] af_half;
reg [41:0] af_addr;
reg        af_take;
reg        af_prog;
reg        af_cnt;
reg [31:0] ar_nrecv;
reg [31:0] ar_rej [0:{{ nrej - 1 }}];
reg  [{{ iw - 1 }}:0] af_ki;
integer    af_k;
// The running collective's current step's record (golden `step_ready`):
// closed, and from the partner with the step's bytes, op and dtype.
reg  [{{ iw - 1 }}:0] cb_idx;
reg [{{ rw - 1 }}:0] cb_r;
reg        cb_closed;
reg        cb_rok;
reg [31:0] cb_need;
reg        cb_trig_rx;
always @(*) begin
    cb_idx = {ar$0$run_comm[{{ sb - 1 }}:0], ar$0$run_seq[0], fr_index[{{ tb - 1 }}:0]};
    cb_r = af_v[cb_idx] ? af_rec[cb_idx] : {{ rw }}'d0;
    cb_closed = cb_r[{{ rw - 48 }}];
    cb_need = (ar$0$st_recv_hi - ar$0$st_recv_lo) << ar$0$run_e;
    cb_rok = (cb_r[{{ rw - 49 }}:{{ rw - 60 }}] == ar$0$st_partner) && (cb_r[{{ rw - 16 }}:{{ rw - 47 }}] == cb_need)
             && (cb_r[{{ rw - 61 }}:0] == { {{- opdt_pad }}ar$0$run_dtype, ar$0$run_op});
    // The fragment accepted now closes the step the collective waits on.
    cb_trig_rx = af_prog && (rn_st == 2'd3) && footer_unpack$last && (footer_unpack$flags == fr_index);
end
always @(*) begin
    af_c = footer_unpack$user[3:0];
    ar$0$fq_comm = af_c;
    af_idx = {af_c[{{ sb - 1 }}:0], footer_unpack$txid[0], footer_unpack$flags[{{ tb - 1 }}:0]};
    af_r = af_v[af_idx] ? af_rec[af_idx] : {{ rw }}'d0;
    af_nidx = af_r[{{ rw - 1 }}:{{ rw - 15 }}];
    af_bytes = af_r[{{ rw - 16 }}:{{ rw - 47 }}];
    af_closed = af_r[{{ rw - 48 }}];
    af_rsrc = af_r[{{ rw - 49 }}:{{ rw - 60 }}];
    // The source's offsets in the box (golden `CommBox::rank_of`: modulo
    // the torus, a coordinate past it included).
    af_ox = ({2'd0, footer_unpack$src{{ cx }}} + {{ d[0] }} - {2'd0, ar$0$fq_origin[3:0]}) % {{ d[0] }};
    af_oy = ({2'd0, footer_unpack$src{{ cy }}} + {{ d[1] }} - {2'd0, ar$0$fq_origin[7:4]}) % {{ d[1] }};
    af_oz = ({2'd0, footer_unpack$src{{ cz }}} + {{ d[2] }} - {2'd0, ar$0$fq_origin[11:8]}) % {{ d[2] }};
    af_src = {af_ox[3:0], af_oy[3:0], af_oz[3:0]};
    af_inbox = (af_ox < {1'b0, ar$0$fq_extent[4:0]}) && (af_oy < {1'b0, ar$0$fq_extent[12:8]})
               && (af_oz < {1'b0, ar$0$fq_extent[20:16]})
               && (footer_unpack$src{{ cf }} == node{{ cf }}) && (footer_unpack$src{{ cr }} == node{{ cr }});
    af_end = {2'd0, header_unpack$vaddr} + {30'd0, header_unpack$size};
    af_seqn = ar$0$fq_seq + 14'd1;
    af_cur = footer_unpack$txid == ar$0$fq_seq;
    af_rej = 4'd0;
    if (!ar$0$fq_ctrl[31]) af_rej = {{ fr.comm }};
    else if (ar$0$fq_ctrl[15:0] != header_unpack$pdid) af_rej = {{ fr.pdid }};
    else if (!af_cur && (footer_unpack$txid != af_seqn)) af_rej = {{ fr.stale }};
    else if (!af_inbox) af_rej = {{ fr.source }};
    else if (footer_unpack$flags >= {{ limit }}) af_rej = {{ fr.step }};
    else if (af_end > {13'd0, ar$0$fq_ssize[31:1]}) af_rej = {{ fr.range }};
    else if (({1'b0, footer_unpack$seq} < af_nidx) || af_closed) af_rej = {{ fr.duplicate }};
    else if ({1'b0, footer_unpack$seq} > af_nidx) af_rej = {{ fr.gap }};
    else if ((af_nidx != 15'd0) && (af_rsrc != af_src)) af_rej = {{ fr.mixed }};
    case (af_rej)
{%- for (f, n) in ni_map %}
        {{ f }}: af_ni = {{ n }};
{%- endfor %}
        default: af_ni = 4'd0;
    endcase
    // Where it lands: bank txid[0] of the slot's scratch area.
    af_half = {11'd0, ar$0$fq_ssize[31:1]};
    af_addr = ar$0$fq_scratch + (footer_unpack$txid[0] ? af_half : 42'd0) + header_unpack$vaddr;
    // Decided now (x_fe: the engine's checks decided it): accepted, or
    // rejected and counted in AR_REJ; an accepted fragment of the running
    // collective's current sequence number is its progress (the timeout
    // starts again, golden `last_progress`).
    af_cnt = x_commit && x_fe;
    af_take = af_cnt && (af_rej == 4'd0);
    af_prog = af_take && (rn_st != 2'd0) && (af_c == ar$0$run_comm) && af_cur;
    // The valid bits after this cycle: the decision's record first, then
    // the clears (the golden order: the packet, then the AXI4-Lite write,
    // then the cycle's time step).
    af_vn = af_v;
    if (af_take) af_vn[af_idx] = 1'b1;
    for (af_k = 0; af_k < {{ rn }}; af_k = af_k + 1) begin
        af_ki = af_k[{{ iw - 1 }}:0];
        if ((ar$0$clr && (af_ki[{{ iw - 1 }}:{{ tb + 1 }}] == ar$0$clr_slot[{{ sb - 1 }}:0]))
            || (ar$0$seq_adv && (af_ki[{{ iw - 1 }}:{{ tb + 1 }}] == ar$0$run_comm[{{ sb - 1 }}:0])
                && (af_ki[{{ tb }}] == ar$0$run_seq[0])))
            af_vn[af_k] = 1'b0;
    end
end
always @(posedge clock) begin
    if (af_take) af_rec[af_idx] <= {af_nidx + 15'd1, af_bytes + {18'd0, header_unpack$size}, footer_unpack$last, af_src,
                                    footer_unpack$user[{{ userw - 1 }}:4]};
end
always @(posedge clock) begin
    if (reset) begin
        af_v <= {{ rn }}'d0;
        ar_nrecv <= 32'd0;
{%- for i in 0..nrej %}
        ar_rej[{{ i }}] <= 32'd0;
{%- endfor %}
    end else begin
        af_v <= af_vn;
        if (af_take) ar_nrecv <= ar_nrecv + 32'd1;
        if (af_cnt && (af_rej != 4'd0)) ar_rej[af_rej] <= ar_rej[af_rej] + 32'd1;
    end
end
// The offsets fit 4 bits (each below its extent, at most 16).
// The fragment's record's op and dtype bits are checked on the step's
// record (cb_r, whose next index is not: a closed record's count is its
// bytes'); the extent fields' top bits and the size's bit 0 (the
// bank is half the area) are not the engine's.
wire unused_ar_recv = &{1'b0, af_ox[5:4], af_oy[5:4], af_oz[5:4], af_end[43:42], ar$0$fq_ctrl[30:16],
                        af_r[{{ rw - 61 }}:0], cb_r[{{ rw - 1 }}:{{ rw - 15 }}], ar$0$fq_extent[15:13], ar$0$fq_extent[7:5], ar$0$fq_ssize[0],
                        af_ki[{{ tb - 1 }}:0]{{ unused_hi }}};
