{# ar_copy: the allreduce engine's data path for a communicator of one rank (see ni/allreduce.rs): the source vector read over the AXI4 master and written to the destination, one chunk of max_payload_bytes at a time, as the golden `Engine::do_step` of an empty plan. #}
// ---- allreduce data path: a box of one rank ----
// A descriptor checked OK on a slot of one rank (`cp_go`) copies its source
// to its destination in chunks of {{ p }} bytes, each read whole (one AR
// burst, two where it crosses a 4 KiB page, R beats into `cp_buf` from
// word 1), then written whole (one AW burst, two at a 4 KiB page, the beats
// realigned from `cp_buf`, strobes exactly the chunk's bytes), then its B
// responses taken before the next chunk is read (a chunk's source may be
// the previous chunk's destination, as in the golden model's order). The
// doorbell was accepted only with the AXI4 master quiet (`ar_quiet`) and
// everything else waits (`ar_hold`), so the copy is alone on AXI4.
// The same machine runs a collective's combining or storing step
// (`cb_go`, see ar_send.v; golden `Engine::do_step`), chunk after chunk of
// the step's receive range: a storing step is this copy from the scratch
// bank to the destination; a combining step reads the received bytes
// (scratch, into `cp_buf`) and then the partial (`cb_src`: the source
// before this rank's first combining step, the destination after; into
// `cb_buf`), streams both, realigned to the destination's alignment,
// through `reduce_alu` (`alu$0`, one 128-bit flit per cycle, partial as
// `a`, received as `b`: the golden `combine_bytes(mine, got)`), collects
// its results in `cb_res` (already in the destination's alignment) and
// writes them as the copy writes a chunk.
// States: 0 idle, 1 AR, 2 AR of the next page, 3 R, 4 AW, 5 W, 6 AW of the
// next page, 7 B; a combining step's second read: 8 AR, 9 AR of the next
// page, 10 R; 11 the chunk through reduce_alu.
(* ram_style = "distributed" *)
reg [127:0] cp_buf [0:31];
(* ram_style = "distributed" *)
reg [127:0] cb_buf [0:31];
(* ram_style = "distributed" *)
reg [127:0] cb_res [0:31];
reg        cp_step;
reg        cp_comb;
reg        cp_sfin;
reg [41:0] cb_src;
reg [41:0] cp_ra;
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
reg  [3:0] cp_st;
reg [41:0] cp_src;
reg [41:0] cp_dst;
reg [30:0] cp_left;
reg  [8:0] cp_len;
reg  [4:0] cp_rk;
reg  [4:0] cp_wk;
reg  [1:0] cp_bk;
reg        cp_go;
reg        cp_fin;
reg  [9:0] cp_rtmp;
reg  [4:0] cp_rb;
reg  [8:0] cp_rtop;
reg        cp_rsplit;
reg  [4:0] cp_r1;
reg  [9:0] cp_wtmp;
reg  [4:0] cp_wb;
reg  [8:0] cp_wtop;
reg        cp_wsplit;
reg  [4:0] cp_w1;
reg  [1:0] cp_bneed;
reg        cp_rd;
reg        cp_take;
reg        cp_arv;
reg [41:0] cp_araddr;
reg  [7:0] cp_arlen;
reg        cp_awv;
reg [41:0] cp_awaddr;
reg  [7:0] cp_awlen;
reg        cp_wv;
reg        cp_wlast;
reg        cp_bw;
reg  [4:0] cp_off;
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
reg        cp_next;
always @(*) begin
    cp_go = ar$0$done && (ar$0$status == {{ st_ok }}) && ar$0$one;
    // Beats of the chunk's read and write, and where a 4 KiB page ends.
    // The read of the chunk: the received bytes (or a copy's source),
    // then for a combining step the partial.
    cp_ra = (cp_st >= 4'd8) ? cb_src : cp_src;
    cp_rtmp = {6'd0, cp_ra[3:0]} + {1'b0, cp_len} + 10'd15;
    cp_rb = cp_rtmp[8:4];
    cp_rtop = 9'd256 - {1'b0, cp_ra[11:4]};
    cp_rsplit = {4'd0, cp_rb} > cp_rtop;
    cp_r1 = cp_rsplit ? cp_rtop[4:0] : cp_rb;
    cp_wtmp = {6'd0, cp_dst[3:0]} + {1'b0, cp_len} + 10'd15;
    cp_wb = cp_wtmp[8:4];
    cp_wtop = 9'd256 - {1'b0, cp_dst[11:4]};
    cp_wsplit = {4'd0, cp_wb} > cp_wtop;
    cp_w1 = cp_wsplit ? cp_wtop[4:0] : cp_wb;
    cp_bneed = cp_wsplit ? 2'd2 : 2'd1;
    // AR: the chunk's first burst, then the next page's.
    cp_arv = (cp_st == 4'd1) || (cp_st == 4'd2) || (cp_st == 4'd8) || (cp_st == 4'd9);
    cp_araddr = ((cp_st == 4'd1) || (cp_st == 4'd8)) ? {cp_ra[41:4], 4'd0} : {cp_ra[41:12] + 30'd1, 12'd0};
    cp_arlen = {3'd0, (((cp_st == 4'd1) || (cp_st == 4'd8)) ? cp_r1 : cp_rb - cp_r1) - 5'd1};
    // R beats, as soon as the first AR is out.
    cp_rd = ((cp_st == 4'd1) || (cp_st == 4'd2) || (cp_st == 4'd3) || (cp_st == 4'd8) || (cp_st == 4'd9)
             || (cp_st == 4'd10)) && (cp_rk != cp_rb);
    cp_take = cp_rd && m_rvalid;
    // AW: the chunk's first burst, then the next page's.
    cp_awv = (cp_st == 4'd4) || (cp_st == 4'd6);
    cp_awaddr = (cp_st == 4'd4) ? {cp_dst[41:4], 4'd0} : {cp_dst[41:12] + 30'd1, 12'd0};
    cp_awlen = {3'd0, ((cp_st == 4'd4) ? cp_w1 : cp_wb - cp_w1) - 5'd1};
    // W beat k: destination bytes [dst & ~15 + 16k, +16) are the chunk's
    // bytes from offset 16k - dst mod 16, i.e. the read bytes from
    // 16 + src mod 16 - dst mod 16 + 16k in cp_buf (word 0 never strobed).
    // A combining step's results are in the destination's alignment
    // already (from cb_res word 1).
    cp_wv = (cp_st == 4'd5);
    cp_off = cp_comb ? 5'd16 : {1'b0, cp_src[3:0]} + 5'd16 - {1'b0, cp_dst[3:0]};
    cp_i = cp_wk + {4'd0, cp_off[4]};
    cp_cat = cp_comb ? {cb_res[cp_i + 5'd1], cb_res[cp_i]} : {cp_buf[cp_i + 5'd1], cp_buf[cp_i]};
    cp_wdata = cp_cat[127:0];
    case (cp_off[3:0])
{%- for b in 0..16 %}
        4'd{{ b }}: cp_wdata = cp_cat[{{ 127 + 8 * b }}:{{ 8 * b }}];
{%- endfor %}
    endcase
    // A combining step's flit k, both operands in the destination's
    // alignment: the received bytes from cp_buf, the partial from cb_buf
    // (each realigned as the copy's write is).
    cb_feed = (cp_st == 4'd11) && (cb_fk != cp_wb);
    cb_offa = {1'b0, cp_src[3:0]} + 5'd16 - {1'b0, cp_dst[3:0]};
    cb_offb = {1'b0, cb_src[3:0]} + 5'd16 - {1'b0, cp_dst[3:0]};
    cb_ia = cb_fk + {4'd0, cb_offa[4]};
    cb_ib = cb_fk + {4'd0, cb_offb[4]};
    cb_cata = {cp_buf[cb_ia + 5'd1], cp_buf[cb_ia]};
    cb_catb = {cb_buf[cb_ib + 5'd1], cb_buf[cb_ib]};
    cb_b = cb_cata[127:0];
    case (cb_offa[3:0])
{%- for b in 0..16 %}
        4'd{{ b }}: cb_b = cb_cata[{{ 127 + 8 * b }}:{{ 8 * b }}];
{%- endfor %}
    endcase
    cb_a = cb_catb[127:0];
    case (cb_offb[3:0])
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
    cp_hi16 = {6'd0, cp_dst[3:0]} + {1'b0, cp_len} - {1'b0, cp_wk, 4'd0};
    cp_lo = (cp_wk == 5'd0) ? {1'b0, cp_dst[3:0]} : 5'd0;
    cp_hi = (cp_hi16 > 10'd16) ? 5'd16 : cp_hi16[4:0];
    cp_mhi = (17'd1 << cp_hi) - 17'd1;
    cp_mlo = (17'd1 << cp_lo) - 17'd1;
    cp_wstrb = cp_mhi[15:0] & ~cp_mlo[15:0];
    cp_wlast = (cp_wsplit && (cp_wk == cp_w1 - 5'd1)) || (cp_wk == cp_wb - 5'd1);
    // B of each burst, while writing or after.
    cp_bw = ((cp_st == 4'd5) || (cp_st == 4'd6) || (cp_st == 4'd7)) && (cp_bk != cp_bneed);
    // The chunk is in memory: the next one, or the completion (a single
    // rank's copy), or the step done (a collective's).
    cp_next = (cp_st == 4'd7) && (cp_bk == cp_bneed);
    cp_fin = cp_next && (cp_left == 31'd0) && !cp_step;
    cp_sfin = cp_next && (cp_left == 31'd0) && cp_step;
    cp_nlen = (cp_left > 31'd{{ p }}) ? 31'd{{ p }} : cp_left;
end
always @(posedge clock) begin
    if (cp_take && (cp_st < 4'd8)) cp_buf[cp_rk + 5'd1] <= m_rdata;
end
always @(posedge clock) begin
    if (cp_take && (cp_st >= 4'd8)) cb_buf[cp_rk + 5'd1] <= m_rdata;
end
always @(posedge clock) begin
    if (alu$0$out_valid) cb_res[cb_ck + 5'd1] <= alu$0$y;
end
always @(posedge clock) begin
    if (reset) begin
        cp_st <= 4'd0;
        cp_step <= 1'b0;
        cp_comb <= 1'b0;
    end else begin
        if (cp_take) cp_rk <= cp_rk + 5'd1;
        if (cp_bw && m_bvalid) cp_bk <= cp_bk + 2'd1;
        if (cb_feed) cb_fk <= cb_fk + 5'd1;
        if (alu$0$out_valid) cb_ck <= cb_ck + 5'd1;
        if (cp_go) begin
            cp_st <= 4'd1;
            cp_step <= 1'b0;
            cp_comb <= 1'b0;
            cp_src <= ar$0$src;
            cp_dst <= ar$0$dst;
            cp_len <= (ar$0$bytes > 31'd{{ p }}) ? 9'd{{ p }} : ar$0$bytes[8:0];
            cp_left <= (ar$0$bytes > 31'd{{ p }}) ? ar$0$bytes - 31'd{{ p }} : 31'd0;
            cp_rk <= 5'd0;
            cp_bk <= 2'd0;
        end
        if (cb_go) begin
            cp_st <= 4'd1;
            cp_step <= 1'b1;
            cp_comb <= ar$0$st_combine;
            cp_src <= cb_from;
            cb_src <= cb_mine;
            cp_dst <= cb_to;
            cp_len <= (cb_bytes > 31'd{{ p }}) ? 9'd{{ p }} : cb_bytes[8:0];
            cp_left <= (cb_bytes > 31'd{{ p }}) ? cb_bytes - 31'd{{ p }} : 31'd0;
            cp_rk <= 5'd0;
            cp_bk <= 2'd0;
        end
        case (cp_st)
            4'd1: if (m_arready) cp_st <= cp_rsplit ? 4'd2 : 4'd3;
            4'd2: if (m_arready) cp_st <= 4'd3;
            4'd3: if (cp_rk == cp_rb) begin
                cp_st <= cp_comb ? 4'd8 : 4'd4;
                cp_rk <= 5'd0;
                cp_wk <= 5'd0;
            end
            4'd8: if (m_arready) cp_st <= cp_rsplit ? 4'd9 : 4'd10;
            4'd9: if (m_arready) cp_st <= 4'd10;
            4'd10: if (cp_rk == cp_rb) begin
                cp_st <= 4'd11;
                cb_fk <= 5'd0;
                cb_ck <= 5'd0;
            end
            // Every flit fed, every result collected (the ALU's latency).
            4'd11: if (cb_ck == cp_wb) cp_st <= 4'd4;
            4'd4, 4'd6: if (m_awready) cp_st <= 4'd5;
            4'd5: if (m_wready) begin
                cp_wk <= cp_wk + 5'd1;
                if (cp_wsplit && (cp_wk == cp_w1 - 5'd1)) cp_st <= 4'd6;
                else if (cp_wk == cp_wb - 5'd1) cp_st <= 4'd7;
            end
            4'd7: if (cp_next) begin
                if (cp_left == 31'd0) cp_st <= 4'd0;
                else begin
                    cp_st <= 4'd1;
                    cp_src <= cp_src + {33'd0, cp_len};
                    cb_src <= cb_src + {33'd0, cp_len};
                    cp_dst <= cp_dst + {33'd0, cp_len};
                    cp_len <= cp_nlen[8:0];
                    cp_left <= cp_left - cp_nlen;
                    cp_rk <= 5'd0;
                    cp_bk <= 2'd0;
                end
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
// only when fewer than the burst's beats, at most 31).
// The ALU's `bad` (the check let only legal op/dtype pairs through).
wire unused_ar_copy = &{1'b0, cp_rtmp[9], cp_rtmp[3:0], cp_wtmp[9], cp_wtmp[3:0], cp_wtop[8:5], cp_cat[255:248], cp_hi16[9:5],
                       cp_mhi[16], cp_mlo[16], cp_nlen[30:9], cb_cata[255:248], cb_catb[255:248], alu$0$bad};
