// Switch allocator "{{ name }}" of {{ ports }} ports (rendered from
// hdl/templates/router/switch_alloc.v; the contract is the golden model,
// exanet_sim::router::model::Router::{{ name }}).
// req[{{ sp }}*o + p]: input p wants output o; req1: and the pair is class 1.
// grant_mat[{{ sp }}*o + p] = match_rows[{{ sp }}*p + o]: input p is matched to output o.
wire unused_req_bits = ^{req, req1};

// The requester granted round-robin: {valid, index} of the lowest set bit
// of m at or above ptr, else the lowest set bit of m.
function automatic [4:0] rr_pick(input [15:0] m, input [3:0] ptr);
    reg [15:0] above;
    reg [15:0] pick;
    reg [15:0] one;
    reg [4:0] r;
    integer i;
    begin
        above = m & ~((16'd1 << ptr) - 16'd1);
        pick = (above != 16'd0) ? above : m;
        one = pick & (~pick + 16'd1);
        r = {|m, 4'd0};
        for (i = 0; i < 16; i = i + 1)
            if (one[i])
                r[3:0] = i[3:0];
        rr_pick = r;
    end
endfunction

// The pointer after requester w of {{ ports }}.
function automatic [3:0] rr_next(input [3:0] w);
    rr_next = (w == 4'd{{ ports - 1 }}) ? 4'd0 : w + 4'd1;
endfunction

integer o;
integer p;
reg [15:0] free_in;
reg [15:0] free_out;
{% if islip %}
// Pointers: per output and class over the inputs, per input over the outputs.
reg [63:0] gptr0;
reg [63:0] gptr1;
reg [63:0] aptr;
reg [63:0] gptr0_d;
reg [63:0] gptr1_d;
reg [63:0] aptr_d;
reg [255:0] got;
reg [255:0] got1;
reg [15:0] r;
reg [15:0] r1;
reg [15:0] row;
reg [15:0] row1;
reg [4:0] pk;
reg use1;
integer it;
initial begin
    gptr0 = 64'd0;
    gptr1 = 64'd0;
    aptr = 64'd0;
end
always @(*) begin
    gptr0_d = gptr0;
    gptr1_d = gptr1;
    aptr_d = aptr;
    free_in = 16'h{{ all }};
    free_out = 16'h{{ all }};
    grant_mat = {{ m }}'d0;
    match_rows = {{ m }}'d0;
    got = 256'd0;
    got1 = 256'd0;
    r = 16'd0;
    r1 = 16'd0;
    row = 16'd0;
    row1 = 16'd0;
    pk = 5'd0;
    use1 = 1'b0;
    for (it = 0; it < {{ iterations }}; it = it + 1) begin
        // grant: each free output picks a free input that wants it, class 1 first
        got = 256'd0;
        got1 = 256'd0;
        for (o = 0; o < {{ ports }}; o = o + 1) begin
            r = 16'd0;
            r1 = 16'd0;
            for (p = 0; p < {{ ports }}; p = p + 1) begin
                r[p] = req[{{ sp }} * o + p] & free_in[p] & free_out[o];
                r1[p] = req1[{{ sp }} * o + p] & free_in[p] & free_out[o];
            end
            use1 = r1 != 16'd0;
            if (use1)
                pk = rr_pick(r1, gptr1[4 * o +: 4]);
            else
                pk = rr_pick(r, gptr0[4 * o +: 4]);
            for (p = 0; p < {{ ports }}; p = p + 1)
                if (pk[4] && pk[3:0] == p[3:0]) begin
                    got[16 * p + o] = 1'b1;
                    got1[16 * p + o] = use1;
                end
        end
        // accept: each input granted picks one output, class-1 grants first
        for (p = 0; p < {{ ports }}; p = p + 1) begin
            row = 16'd0;
            row1 = 16'd0;
            for (o = 0; o < {{ ports }}; o = o + 1) begin
                row[o] = got[16 * p + o];
                row1[o] = got1[16 * p + o];
            end
            if (row1 != 16'd0)
                pk = rr_pick(row1, aptr[4 * p +: 4]);
            else
                pk = rr_pick(row, aptr[4 * p +: 4]);
            if (pk[4]) begin
                free_in[p] = 1'b0;
                for (o = 0; o < {{ ports }}; o = o + 1)
                    if (pk[3:0] == o[3:0]) begin
                        free_out[o] = 1'b0;
                        grant_mat[{{ sp }} * o + p] = 1'b1;
                        match_rows[{{ sp }} * p + o] = 1'b1;
                        if (it == 0) begin
                            if (req1[{{ sp }} * o + p])
                                gptr1_d[4 * o +: 4] = rr_next(p[3:0]);
                            else
                                gptr0_d[4 * o +: 4] = rr_next(p[3:0]);
                            aptr_d[4 * p +: 4] = rr_next(o[3:0]);
                        end
                    end
            end
        end
    end
end
always @(posedge clock) begin
    if (reset) begin
        gptr0 <= 64'd0;
        gptr1 <= 64'd0;
        aptr <= 64'd0;
    end else begin
        gptr0 <= gptr0_d;
        gptr1 <= gptr1_d;
        aptr <= aptr_d;
    end
end
{% else %}
// The diagonal served first: pairs (p, o) with (p + o) mod {{ ports }} = diag.
// Outputs renumbered o' = (o - diag) mod {{ ports }} make it a wavefront that
// starts at diagonal 0 for every diag: the requests are rotated in, one
// wavefront of constant wiring runs, its grants are rotated back (the same
// matching as the golden model's loop from diag, about a fifth of the LUTs
// of that loop written with a run-time diagonal).
reg [3:0] diag;
integer pass;
integer t;
integer dg;
reg [{{ ports * ports - 1 }}:0] rq;
reg [{{ ports * ports - 1 }}:0] rq1;
reg [{{ ports * ports - 1 }}:0] gr;
initial diag = 4'd0;
always @(*) begin
    rq = {{ ports * ports }}'d0;
    rq1 = {{ ports * ports }}'d0;
    for (dg = 0; dg < {{ ports }}; dg = dg + 1)
        if (diag == dg[3:0])
            for (o = 0; o < {{ ports }}; o = o + 1)
                for (p = 0; p < {{ ports }}; p = p + 1) begin
                    rq[{{ ports }} * p + o] = req[{{ sp }} * ((o + dg) % {{ ports }}) + p];
                    rq1[{{ ports }} * p + o] = req1[{{ sp }} * ((o + dg) % {{ ports }}) + p];
                end
    // class-1 pairs first, then every pair, diagonal by diagonal
    free_in = 16'h{{ all }};
    free_out = 16'h{{ all }};
    gr = {{ ports * ports }}'d0;
    for (pass = 0; pass < 2; pass = pass + 1)
        for (t = 0; t < {{ ports }}; t = t + 1)
            for (p = 0; p < {{ ports }}; p = p + 1)
                if (((pass == 0) ? rq1[{{ ports }} * p + ((t + {{ ports }} - p) % {{ ports }})]
                                 : rq[{{ ports }} * p + ((t + {{ ports }} - p) % {{ ports }})])
                        && free_in[p] && free_out[(t + {{ ports }} - p) % {{ ports }}]) begin
                    free_in[p] = 1'b0;
                    free_out[(t + {{ ports }} - p) % {{ ports }}] = 1'b0;
                    gr[{{ ports }} * p + ((t + {{ ports }} - p) % {{ ports }})] = 1'b1;
                end
    grant_mat = {{ m }}'d0;
    match_rows = {{ m }}'d0;
    for (dg = 0; dg < {{ ports }}; dg = dg + 1)
        if (diag == dg[3:0])
            for (o = 0; o < {{ ports }}; o = o + 1)
                for (p = 0; p < {{ ports }}; p = p + 1) begin
                    grant_mat[{{ sp }} * ((o + dg) % {{ ports }}) + p] = gr[{{ ports }} * p + o];
                    match_rows[{{ sp }} * p + ((o + dg) % {{ ports }})] = gr[{{ ports }} * p + o];
                end
end
always @(posedge clock) begin
    if (reset)
        diag <= 4'd0;
    else if (gr != {{ ports * ports }}'d0)
        diag <= rr_next(diag);
end
{% endif %}
