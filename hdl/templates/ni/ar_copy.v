{# ar_copy: the allreduce engine's data path (see ni/allreduce.rs, Combining): a box of one rank's copy of the source to the destination, and a collective's storing or combining step, chunk after chunk of max_payload_bytes, as the golden `Engine::do_step`; a read half and a write half overlapped, the writes in the golden chunk order. #}
// ---- allreduce data path: a box of one rank ----
// A descriptor checked OK on a slot of one rank (`cp_go`) copies its source
// to its destination in chunks of {{ p }} bytes; the same machine runs a
// collective's combining or storing step (`cb_go`, see ar_send.v; golden
// `Engine::do_step`), chunk after chunk of the step's receive range: a
// storing step is this copy from the scratch bank to the destination; a
// combining step reads the received bytes (scratch, `cp_src`) and the
// partial (`cb_src`: the source before this rank's first combining step,
// the destination after) and streams both, realigned to the destination's
// alignment, through `reduce_alu` (`alu$0`, one 128-bit flit per cycle,
// partial as `a`, received as `b`: the golden `combine_bytes(mine, got)`).
// The doorbell or step was taken only with the AXI4 master quiet
// (`ar_quiet`) and everything else waits (`ar_hold`), so the machine is
// alone on AXI4.
//
// Three stages, overlapped, with two banks per buffer (see
// ni/allreduce.rs, Combining):
// - the read half issues a chunk's ARs back to back (`cp_st`: the received
//   bytes, one burst or two at a 4 KiB page, then the partial's likewise)
//   once a chunk record is free (`cp_ai`, four: up to two chunks ahead of
//   the two banks), records the chunk (`cr_*`) and goes on to the next
//   chunk's ARs at once, so the next chunks' reads are out while this
//   chunk's beats still arrive; the R beats (one ID: in AR order) of
//   chunk `cp_rb` are taken into its bank (chunk index mod 2) of `cp_buf`
//   from word 1 and then of `cb_buf` from word 1 once the chunk two
//   before has left that bank (`bk_v`, `bk_f`; RREADY low otherwise);
// - the chunks go on in order (`cp_cb`): a full combining chunk enters
//   the ALU stage (`ca_st`, its bank, offsets and destination latched)
//   when that is free or handing its chunk on; its read bank is free once
//   its last flit is fed; its results go to the same bank of `cb_res`;
// - the write half (`cw_st`) writes a chunk (one AW burst, two at a 4 KiB
//   page, strobes exactly the chunk's bytes) from bank `cw_bk` of
//   `cb_res`, or of `cp_buf` for a copy (whose bank is free after its
//   last W beat). Its B responses are counted (`cp_bo` bursts owed) and
//   need not be in before the next chunk is read when no read range of
//   the step overlaps its write range unless exactly (`cp_safe`: then no
//   chunk reads bytes an earlier chunk writes); otherwise the next
//   chunk's ARs go out only once everything before is written and its B
//   in, the golden order of reads and writes (a chunk's source may be an
//   earlier chunk's destination).
// Writes go out in the golden chunk order; the step (or copy) is done once
// the last chunk's B responses are in (a later step reads what it wrote).
// Read states: 0 idle, 1 AR (once record `cp_ai` is free), 2 AR of the next
// page, 8 the partial's AR, 9 its next page's, 13 wait for everything
// written before the next chunk's ARs (not `cp_safe`), 7 the last chunk's
// ARs out: wait for every chunk written and its B responses. Write
// states: 0 idle, 4 AW, 6 AW of the next page, 5 W.
(* ram_style = "distributed" *)
reg [127:0] cp_buf [0:63];
(* ram_style = "distributed" *)
reg [127:0] cb_buf [0:63];
(* ram_style = "distributed" *)
reg [127:0] cb_res [0:63];
reg        cp_step;
reg        cp_comb;
reg        cp_sfin;
reg        cp_safe;
reg [41:0] cb_src;
reg  [4:0] cb_fk;
reg  [4:0] cb_ck;
reg  [4:0] cb_offa;
reg  [4:0] cb_offb;
reg  [4:0] cb_ia;
reg  [4:0] cb_ib;
reg [255:0] cb_cata;
reg [255:0] cb_catb;
reg [127:0] cb_a;
reg [127:0] cb_b;
reg        cb_feed;
reg        cb_fed;
reg  [3:0] cp_st;
reg [41:0] cp_src;
reg [41:0] cp_dst;
reg [30:0] cp_left;
reg  [8:0] cp_len;
reg  [5:0] cp_rk;
reg  [2:0] cp_bo;
reg        cp_go;
reg        cp_fin;
reg  [9:0] cp_atmp;
reg  [4:0] cp_ab;
reg  [8:0] cp_atop;
reg        cp_asplit;
reg  [4:0] cp_a1;
reg  [9:0] cp_btmp;
reg  [4:0] cp_bb;
reg  [8:0] cp_btop;
reg        cp_bsplit;
reg  [4:0] cp_b1;
reg  [5:0] cp_rtot;
reg  [5:0] cp_rkb;
reg  [9:0] cp_dtmp;
reg  [4:0] cp_db;
reg        cp_rd;
reg        cp_take;
reg        cp_rlast;
reg        cp_arv;
reg        cp_ar1;
reg        cp_arend;
reg [41:0] cp_araddr;
reg  [7:0] cp_arlen;
reg        cp_hand;
// Chunk records, four (a ring; chunk j in record j mod 4, bank j mod 2):
// the next chunk's ARs (`cp_ai`), the chunk whose R beats come
// (`cp_rb`), the next chunk to combine or write (`cp_cb`); per record,
// allocated (ARs out, until its bank is free again) and full (beats in),
// and the chunk: source and partial offsets, destination, length, read
// beats (received, in all).
reg  [1:0] cp_ai;
reg  [1:0] cp_rb;
reg  [1:0] cp_cb;
reg  [3:0] bk_v;
reg  [3:0] bk_f;
reg        cp_bfree;
reg  [3:0] cr_s4 [0:3];
reg  [3:0] cr_c4 [0:3];
reg [41:0] cr_dst [0:3];
reg  [8:0] cr_len [0:3];
reg  [4:0] cr_ab [0:3];
reg  [5:0] cr_rtot [0:3];
reg  [3:0] cn_s4;
reg  [3:0] cn_c4;
reg [41:0] cn_dst;
reg  [8:0] cn_len;
reg        ca_st;
reg  [1:0] ca_bk;
reg        ca_start;
reg        ca_hand;
reg        ca_rel;
reg  [4:0] ca_offa;
reg  [4:0] ca_offb;
reg  [4:0] ca_db;
reg [41:0] ca_dst;
reg  [8:0] ca_len;
reg        cp_more;
reg        cp_done;
reg  [3:0] cw_st;
reg  [1:0] cw_bk;
reg        cw_rel;
reg [41:0] cw_dst;
reg  [8:0] cw_len;
reg  [4:0] cw_off;
reg        cw_comb;
reg  [4:0] cw_wk;
reg  [9:0] cp_wtmp;
reg  [4:0] cp_wb;
reg  [8:0] cp_wtop;
reg        cp_wsplit;
reg  [4:0] cp_w1;
reg        cp_awv;
reg [41:0] cp_awaddr;
reg  [7:0] cp_awlen;
reg        cp_wv;
reg        cp_wlast;
reg        cp_wend;
reg        cp_bw;
reg        cp_btake;
reg  [4:0] cp_i;
reg [255:0] cp_cat;
reg [127:0] cp_wdata;
reg  [9:0] cp_hi16;
reg  [4:0] cp_lo;
reg  [4:0] cp_hi;
reg [16:0] cp_mhi;
reg [16:0] cp_mlo;
reg [15:0] cp_wstrb;
reg [30:0] cp_nlen;
// Whether a read range [r, r + n) of a step meets its write range
// [w, w + n) other than exactly (43-bit sums: no wrap).
function automatic ovl(input [41:0] r, input [41:0] w, input [30:0] n);
    ovl = (r != w) && ({1'b0, r} + {12'd0, n} > {1'b0, w}) && ({1'b0, w} + {12'd0, n} > {1'b0, r});
endfunction
always @(*) begin
    cp_go = ar$0$done && (ar$0$status == {{ st_ok }}) && ar$0$one;
    // Beats of the chunk's reads, and where a 4 KiB page ends: the
    // received bytes (or a copy's source), then for a combining step the
    // partial.
    cp_atmp = {6'd0, cp_src[3:0]} + {1'b0, cp_len} + 10'd15;
    cp_ab = cp_atmp[8:4];
    cp_atop = 9'd256 - {1'b0, cp_src[11:4]};
    cp_asplit = {4'd0, cp_ab} > cp_atop;
    cp_a1 = cp_asplit ? cp_atop[4:0] : cp_ab;
    cp_btmp = {6'd0, cb_src[3:0]} + {1'b0, cp_len} + 10'd15;
    cp_bb = cp_btmp[8:4];
    cp_btop = 9'd256 - {1'b0, cb_src[11:4]};
    cp_bsplit = {4'd0, cp_bb} > cp_btop;
    cp_b1 = cp_bsplit ? cp_btop[4:0] : cp_bb;
    cp_rtot = {1'b0, cp_ab} + (cp_comb ? {1'b0, cp_bb} : 6'd0);
    // AR: the chunk's first burst (once its bank is free), then the next
    // page's; the partial's. The chunk is recorded in its bank with its
    // first AR; the addresses move on to the next chunk with its last.
    cp_ar1 = (cp_st == 4'd1) && !bk_v[cp_ai];
    cp_arv = cp_ar1 || (cp_st == 4'd2) || (cp_st == 4'd8) || (cp_st == 4'd9);
    cp_arend = m_arready && (((cp_st == 4'd1) && cp_ar1 && !cp_asplit && !cp_comb)
                             || ((cp_st == 4'd2) && !cp_comb)
                             || ((cp_st == 4'd8) && !cp_bsplit) || (cp_st == 4'd9));
    case (cp_st)
        4'd1: begin
            cp_araddr = {cp_src[41:4], 4'd0};
            cp_arlen = {3'd0, cp_a1 - 5'd1};
        end
        4'd2: begin
            cp_araddr = {cp_src[41:12] + 30'd1, 12'd0};
            cp_arlen = {3'd0, cp_ab - cp_a1 - 5'd1};
        end
        4'd8: begin
            cp_araddr = {cb_src[41:4], 4'd0};
            cp_arlen = {3'd0, cp_b1 - 5'd1};
        end
        default: begin
            cp_araddr = {cb_src[41:12] + 30'd1, 12'd0};
            cp_arlen = {3'd0, cp_bb - cp_b1 - 5'd1};
        end
    endcase
    // R beats (in AR order) of chunk `cp_rb` into its bank once the chunk
    // two before, in the same bank, has left it (a full record two apart
    // is that chunk: the one two after fills only later): a bank is free
    // again once the ALU has fed its chunk's flits (combining) or the
    // write half has sent its last W beat (a copy), so RREADY is low only
    // when both banks hold chunks; up to two more chunks' ARs are out
    // meanwhile.
    cp_bfree = !(bk_v[cp_rb ^ 2'd2] && bk_f[cp_rb ^ 2'd2]);
    cp_rd = bk_v[cp_rb] && !bk_f[cp_rb] && cp_bfree;
    cp_take = cp_rd && m_rvalid;
    cp_rkb = cp_rk - {1'b0, cr_ab[cp_rb]};
    cp_rlast = cp_take && (cp_rk == cr_rtot[cp_rb] - 6'd1);
    // The next chunk in order (bank `cp_cb`): its record.
    cn_s4 = cr_s4[cp_cb];
    cn_c4 = cr_c4[cp_cb];
    cn_dst = cr_dst[cp_cb];
    cn_len = cr_len[cp_cb];
    // Its beats in the destination's alignment (the ALU's flits).
    cp_dtmp = {6'd0, cn_dst[3:0]} + {1'b0, cn_len} + 10'd15;
    cp_db = cp_dtmp[8:4];
    // A combining step's flit k, both operands in the destination's
    // alignment: the received bytes from cp_buf, the partial from cb_buf
    // (each realigned as the copy's write is), bank `ca_bk`.
    // The ALU stage (`ca_st`) holds the chunk it combines: its bank,
    // offsets, flits, destination and length.
    cb_feed = ca_st && (cb_fk != ca_db);
    cb_fed = cb_feed && (cb_fk == ca_db - 5'd1);
    cb_offa = {1'b0, cn_s4} + 5'd16 - {1'b0, cn_dst[3:0]};
    cb_offb = {1'b0, cn_c4} + 5'd16 - {1'b0, cn_dst[3:0]};
    cb_ia = cb_fk + {4'd0, ca_offa[4]};
    cb_ib = cb_fk + {4'd0, ca_offb[4]};
    cb_cata = {cp_buf[{ca_bk[0], cb_ia + 5'd1}], cp_buf[{ca_bk[0], cb_ia}]};
    cb_catb = {cb_buf[{ca_bk[0], cb_ib + 5'd1}], cb_buf[{ca_bk[0], cb_ib}]};
    cb_b = cb_cata[127:0];
    case (ca_offa[3:0])
{%- for b in 0..16 %}
        4'd{{ b }}: cb_b = cb_cata[{{ 127 + 8 * b }}:{{ 8 * b }}];
{%- endfor %}
    endcase
    cb_a = cb_catb[127:0];
    case (ca_offb[3:0])
{%- for b in 0..16 %}
        4'd{{ b }}: cb_a = cb_catb[{{ 127 + 8 * b }}:{{ 8 * b }}];
{%- endfor %}
    endcase
    alu$0$clock = clock;
    alu$0$reset = reset;
    alu$0$in_valid = cb_feed;
    alu$0$op = ar$0$run_op;
    alu$0$dtype = ar$0$run_dtype;
    alu$0$a = cb_a;
    alu$0$b = cb_b;
    // The ALU stage hands its chunk to the write half once every result is
    // collected (the ALU's latency) and the write half is idle; the next
    // full combining chunk enters the ALU stage then or whenever it is
    // free (its results go to the other bank of cb_res, which the write
    // half has finished with: the chunk before was handed on only with
    // the write half idle). A copy's full chunk goes to the write half
    // when that is idle.
    ca_hand = ca_st && (cb_ck == ca_db) && (cw_st == 4'd0);
    ca_start = cp_comb && bk_f[cp_cb] && (!ca_st || ca_hand);
    cp_hand = !cp_comb && bk_f[cp_cb] && (cw_st == 4'd0);
    // A read bank is free once the ALU fed its last flit, or (a copy) the
    // write half sent its last W beat.
    ca_rel = cb_fed;
    cw_rel = (cw_st == 4'd5) && m_wready && !cw_comb && (cw_wk == cp_wb - 5'd1);
    cp_more = cp_left != 31'd0;
    cp_nlen = (cp_left > 31'd{{ p }}) ? 31'd{{ p }} : cp_left;
    // Every chunk written and its B responses in: the completion (a single
    // rank's copy), or the step done (a collective's).
    cp_done = (cp_st == 4'd7) && (bk_v == 4'd0) && !ca_st && (cw_st == 4'd0) && (cp_bo == 3'd0);
    cp_fin = cp_done && !cp_step;
    cp_sfin = cp_done && cp_step;
    // The write half: beats of the chunk and where a 4 KiB page ends.
    cp_wtmp = {6'd0, cw_dst[3:0]} + {1'b0, cw_len} + 10'd15;
    cp_wb = cp_wtmp[8:4];
    cp_wtop = 9'd256 - {1'b0, cw_dst[11:4]};
    cp_wsplit = {4'd0, cp_wb} > cp_wtop;
    cp_w1 = cp_wsplit ? cp_wtop[4:0] : cp_wb;
    // AW: the chunk's first burst, then the next page's.
    cp_awv = (cw_st == 4'd4) || (cw_st == 4'd6);
    cp_awaddr = (cw_st == 4'd4) ? {cw_dst[41:4], 4'd0} : {cw_dst[41:12] + 30'd1, 12'd0};
    cp_awlen = {3'd0, ((cw_st == 4'd4) ? cp_w1 : cp_wb - cp_w1) - 5'd1};
    // W beat k: destination bytes [dst & ~15 + 16k, +16) are the chunk's
    // bytes from offset 16k - dst mod 16, i.e. the read bytes from
    // 16 + src mod 16 - dst mod 16 + 16k in cp_buf (word 0 never strobed).
    // A combining step's results are in the destination's alignment
    // already (from cb_res word 1).
    cp_wv = (cw_st == 4'd5);
    cp_i = cw_wk + {4'd0, cw_off[4]};
    cp_cat = cw_comb ? {cb_res[{cw_bk[0], cp_i + 5'd1}], cb_res[{cw_bk[0], cp_i}]}
                     : {cp_buf[{cw_bk[0], cp_i + 5'd1}], cp_buf[{cw_bk[0], cp_i}]};
    cp_wdata = cp_cat[127:0];
    case (cw_off[3:0])
{%- for b in 0..16 %}
        4'd{{ b }}: cp_wdata = cp_cat[{{ 127 + 8 * b }}:{{ 8 * b }}];
{%- endfor %}
    endcase
    cp_hi16 = {6'd0, cw_dst[3:0]} + {1'b0, cw_len} - {1'b0, cw_wk, 4'd0};
    cp_lo = (cw_wk == 5'd0) ? {1'b0, cw_dst[3:0]} : 5'd0;
    cp_hi = (cp_hi16 > 10'd16) ? 5'd16 : cp_hi16[4:0];
    cp_mhi = (17'd1 << cp_hi) - 17'd1;
    cp_mlo = (17'd1 << cp_lo) - 17'd1;
    cp_wstrb = cp_mhi[15:0] & ~cp_mlo[15:0];
    cp_wlast = (cp_wsplit && (cw_wk == cp_w1 - 5'd1)) || (cw_wk == cp_wb - 5'd1);
    cp_wend = cp_wv && m_wready && cp_wlast;
    // B of each burst written, while writing or after.
    cp_bw = cp_bo != 3'd0;
    cp_btake = cp_bw && m_bvalid;
end
always @(posedge clock) begin
    if (cp_take && (cp_rk < {1'b0, cr_ab[cp_rb]})) cp_buf[{cp_rb[0], cp_rk[4:0] + 5'd1}] <= m_rdata;
end
always @(posedge clock) begin
    if (cp_take && (cp_rk >= {1'b0, cr_ab[cp_rb]})) cb_buf[{cp_rb[0], cp_rkb[4:0] + 5'd1}] <= m_rdata;
end
always @(posedge clock) begin
    if (alu$0$out_valid) cb_res[{ca_bk[0], cb_ck + 5'd1}] <= alu$0$y;
end
always @(posedge clock) begin
    if (cp_ar1 && m_arready) begin
        cr_s4[cp_ai] <= cp_src[3:0];
        cr_c4[cp_ai] <= cb_src[3:0];
        cr_dst[cp_ai] <= cp_dst;
        cr_len[cp_ai] <= cp_len;
        cr_ab[cp_ai] <= cp_ab;
        cr_rtot[cp_ai] <= cp_rtot;
    end
end
always @(posedge clock) begin
    if (reset) begin
        cp_st <= 4'd0;
        ca_st <= 1'b0;
        cw_st <= 4'd0;
        cp_bo <= 3'd0;
        cp_step <= 1'b0;
        cp_comb <= 1'b0;
        cp_safe <= 1'b0;
        cp_ai <= 2'd0;
        cp_rb <= 2'd0;
        cp_cb <= 2'd0;
        bk_v <= 4'd0;
        bk_f <= 4'd0;
    end else begin
        if (cp_take) cp_rk <= cp_rk + 6'd1;
        if (cp_rlast) begin
            cp_rk <= 6'd0;
            cp_rb <= cp_rb + 2'd1;
            bk_f[cp_rb] <= 1'b1;
        end
        if (cp_wend && !cp_btake) cp_bo <= cp_bo + 3'd1;
        if (!cp_wend && cp_btake) cp_bo <= cp_bo - 3'd1;
        if (cb_feed) cb_fk <= cb_fk + 5'd1;
        if (alu$0$out_valid) cb_ck <= cb_ck + 5'd1;
        // Records freed with their banks (the ALU's and the write half's
        // are different ones when both happen), then allocated with a
        // chunk's first AR (a free record only).
        if (ca_rel) begin
            bk_v[ca_bk] <= 1'b0;
            bk_f[ca_bk] <= 1'b0;
        end
        if (cw_rel) begin
            bk_v[cw_bk] <= 1'b0;
            bk_f[cw_bk] <= 1'b0;
        end
        if (cp_ar1 && m_arready) begin
            bk_v[cp_ai] <= 1'b1;
            cp_ai <= cp_ai + 2'd1;
        end
        if (cp_go) begin
            cp_st <= 4'd1;
            cp_step <= 1'b0;
            cp_comb <= 1'b0;
            cp_safe <= !ovl(ar$0$src, ar$0$dst, ar$0$bytes);
            cp_src <= ar$0$src;
            cp_dst <= ar$0$dst;
            cp_len <= (ar$0$bytes > 31'd{{ p }}) ? 9'd{{ p }} : ar$0$bytes[8:0];
            cp_left <= (ar$0$bytes > 31'd{{ p }}) ? ar$0$bytes - 31'd{{ p }} : 31'd0;
            cp_rk <= 6'd0;
        end
        if (cb_go) begin
            cp_st <= 4'd1;
            cp_step <= 1'b1;
            cp_comb <= ar$0$st_combine;
            cp_safe <= !ovl(cb_from, cb_to, cb_bytes) && !(ar$0$st_combine && ovl(cb_mine, cb_to, cb_bytes));
            cp_src <= cb_from;
            cb_src <= cb_mine;
            cp_dst <= cb_to;
            cp_len <= (cb_bytes > 31'd{{ p }}) ? 9'd{{ p }} : cb_bytes[8:0];
            cp_left <= (cb_bytes > 31'd{{ p }}) ? cb_bytes - 31'd{{ p }} : 31'd0;
            cp_rk <= 6'd0;
        end
        case (cp_st)
            4'd1: if (cp_ar1 && m_arready) cp_st <= cp_asplit ? 4'd2 : cp_comb ? 4'd8 : 4'd1;
            4'd2: if (m_arready) cp_st <= cp_comb ? 4'd8 : 4'd1;
            4'd8: if (m_arready) cp_st <= cp_bsplit ? 4'd9 : 4'd1;
            4'd9: if (m_arready) cp_st <= 4'd1;
            // Not `cp_safe`: every earlier chunk written and its B in.
            4'd13: if ((bk_v == 4'd0) && !ca_st && (cw_st == 4'd0) && (cp_bo == 3'd0)) cp_st <= 4'd1;
            default: ;
        endcase
        // The read half to the next chunk with this chunk's last AR: at
        // once when the step is `cp_safe`, else once everything before is
        // written (13); after the last chunk, the wait for its writes (7).
        if (cp_arend) begin
            if (!cp_more) cp_st <= 4'd7;
            else begin
                cp_st <= cp_safe ? 4'd1 : 4'd13;
                cp_src <= cp_src + {33'd0, cp_len};
                cb_src <= cb_src + {33'd0, cp_len};
                cp_dst <= cp_dst + {33'd0, cp_len};
                cp_len <= cp_nlen[8:0];
                cp_left <= cp_left - cp_nlen;
            end
        end
        if (cp_done) cp_st <= 4'd0;
        if (ca_hand) begin
            ca_st <= 1'b0;
            cw_st <= 4'd4;
            cw_bk <= ca_bk;
            cw_wk <= 5'd0;
            cw_dst <= ca_dst;
            cw_len <= ca_len;
            cw_comb <= 1'b1;
            cw_off <= 5'd16;
        end
        if (ca_start) begin
            ca_st <= 1'b1;
            ca_bk <= cp_cb;
            cp_cb <= cp_cb + 2'd1;
            ca_offa <= cb_offa;
            ca_offb <= cb_offb;
            ca_db <= cp_db;
            ca_dst <= cn_dst;
            ca_len <= cn_len;
            cb_fk <= 5'd0;
            cb_ck <= 5'd0;
        end
        if (cp_hand) begin
            cp_cb <= cp_cb + 2'd1;
            cw_st <= 4'd4;
            cw_bk <= cp_cb;
            cw_wk <= 5'd0;
            cw_dst <= cn_dst;
            cw_len <= cn_len;
            cw_comb <= 1'b0;
            cw_off <= {1'b0, cn_s4} + 5'd16 - {1'b0, cn_dst[3:0]};
        end
        case (cw_st)
            4'd4, 4'd6: if (m_awready) cw_st <= 4'd5;
            4'd5: if (m_wready) begin
                cw_wk <= cw_wk + 5'd1;
                if (cp_wsplit && (cw_wk == cp_w1 - 5'd1)) cw_st <= 4'd6;
                else if (cw_wk == cp_wb - 5'd1) cw_st <= 4'd0;
            end
            default: ;
        endcase
    end
end
// The AXI4 master is quiet: no transmit read issued or outstanding, no
// receive write being sent or awaiting its B. An allreduce DOORBELL is
// accepted only then (`ar_dbw` holds it). A DOORBELL is pending from its
// address alone (`ar_dbp`, AWVALID: a master may raise WVALID later).
// While one is pending the scheduler picks nothing, so the transmit side
// drains (`ar_txq`); until it has, the receive path goes on deciding: the
// transmit side drains only as the network returns credits, and a
// network that waits for this NI to consume its packets would never
// return them (the wait on the doorbell would close a cycle through the
// torus; a single NI shows it as a receive packet undecided while the
// payload FIFO waits for credits). Once the transmit side is quiet it
// stays so (no pick), and the receive path then stops deciding
// (`ar_rxh`): its writes drain through memory alone, a bounded wait, and
// no new one starts, so the master goes quiet and the DOORBELL is taken.
// Packets decided meanwhile come before the DOORBELL in the golden order,
// as they did on AXI4-Lite.
reg        ar_quiet;
reg        ar_txq;
reg        ar_rxh;
reg        ar_dbw;
reg        ar_dbp;
always @(*) begin
    ar_txq = ~|rj_count && !ar_v && !f_load;
    ar_quiet = ar_txq && ~|lq_count && (rx_st != 3'd3) && (rx_st != 3'd4);
    ar_dbp = s_awvalid && a_ardb;
    ar_rxh = ar_dbp && ar_txq;
    ar_dbw = ar_dbp && !ar_quiet;
end
// Bits the copy does not use: the beat counts' rounding bits, the top of
// the realigning window (at most 15 bytes of the upper word are taken),
// the masks' carry bit, and the high bits of lengths at most {{ p }};
// the beats left to the 4 KiB page's end above 31 (a split takes them
// only when fewer than the burst's beats, at most 31); the partial's beat
// index above 31 (at most P / 16 + 1 beats).
// The ALU's `bad` (the check let only legal op/dtype pairs through).
wire unused_ar_copy = &{1'b0, cp_atmp[9], cp_atmp[3:0], cp_btmp[9], cp_btmp[3:0], cp_dtmp[9], cp_dtmp[3:0],
                       cp_wtmp[9], cp_wtmp[3:0], cp_wtop[8:5], cp_cat[255:248], cp_hi16[9:5],
                       cp_mhi[16], cp_mlo[16], cp_nlen[30:9], cp_rkb[5], cb_cata[255:248], cb_catb[255:248], alu$0$bad};
