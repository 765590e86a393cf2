{# reduce_alu: lane-wise combine of two flits (see allreduce/reduce_alu.rs). Every code comes from `c`, every float field from `f32`/`f64`. #}
// Decode: every code from the golden model's ReduceOp / ReduceDtype.
wire is_sum  = op == {{ c.sum }};
wire is_min  = op == {{ c.min }};
wire is_max  = op == {{ c.max }};
wire is_band = op == {{ c.band }};
wire is_bor  = op == {{ c.bor }};
wire is_bxor = op == {{ c.bxor }};
wire is_i32  = dtype == {{ c.i32 }};
wire is_u32  = dtype == {{ c.u32 }};
wire is_i64  = dtype == {{ c.i64 }};
wire is_u64  = dtype == {{ c.u64 }};
wire is_f32  = dtype == {{ c.f32 }};
wire is_f64  = dtype == {{ c.f64 }};
wire is_bitwise = is_band || is_bor || is_bxor;
wire known_op = is_sum || is_min || is_max || is_bitwise;
wire known_dtype = is_i32 || is_u32 || is_i64 || is_u64 || is_f32 || is_f64;
wire illegal = !(known_op && known_dtype) || (is_bitwise && (is_f32 || is_f64));
wire wide_lanes = is_i64 || is_u64 || is_f64;
{%- for l in lanes %}

// {{ l.bits }}-bit lane {{ l.i }}. Min/max compare order keys as unsigned
// numbers: unsigned types as they are, signed ones with the sign bit
// flipped, floats with negatives inverted (so -Inf < -0 < +0 < +Inf).
wire [{{ l.bits - 1 }}:0] {{ l.n }}_a = a[{{ l.hi }}:{{ l.lo }}];
wire [{{ l.bits - 1 }}:0] {{ l.n }}_b = b[{{ l.hi }}:{{ l.lo }}];
wire [{{ l.bits - 1 }}:0] {{ l.n }}_ka = {{ l.is_u }} ? {{ l.n }}_a
    : ({{ l.is_f }} && {{ l.n }}_a[{{ l.bits - 1 }}]) ? ~{{ l.n }}_a : {~{{ l.n }}_a[{{ l.bits - 1 }}], {{ l.n }}_a[{{ l.bits - 2 }}:0]};
wire [{{ l.bits - 1 }}:0] {{ l.n }}_kb = {{ l.is_u }} ? {{ l.n }}_b
    : ({{ l.is_f }} && {{ l.n }}_b[{{ l.bits - 1 }}]) ? ~{{ l.n }}_b : {~{{ l.n }}_b[{{ l.bits - 1 }}], {{ l.n }}_b[{{ l.bits - 2 }}:0]};
wire {{ l.n }}_lt = {{ l.n }}_ka < {{ l.n }}_kb;
wire {{ l.n }}_nan = {{ l.is_f }} && (({{ l.n }}_a[{{ l.f.exp_hi }}:{{ l.f.exp_lo }}] == {{ l.f.e_ones }} && {{ l.n }}_a[{{ l.f.frac_hi }}:0] != {{ l.f.frac_zero }})
    || ({{ l.n }}_b[{{ l.f.exp_hi }}:{{ l.f.exp_lo }}] == {{ l.f.e_ones }} && {{ l.n }}_b[{{ l.f.frac_hi }}:0] != {{ l.f.frac_zero }}));
// Integer sum wraps; min picks a when a < b, max when not (equal keys are equal bits).
wire [{{ l.bits - 1 }}:0] {{ l.n }}_r = is_sum ? {{ l.n }}_a + {{ l.n }}_b
    : {{ l.n }}_nan ? {{ l.f.nan }}
    : ({{ l.n }}_lt == is_min) ? {{ l.n }}_a : {{ l.n }}_b;
{%- endfor %}

// Cycle 1: every operation but the float sum; then a delay line to the
// adders' latency, so every operation leaves after the same cycles.
reg  [{{ w - 1 }}:0] y1;
always @(*) begin
    if (is_band) y1 = a & b;
    else if (is_bor) y1 = a | b;
    else if (is_bxor) y1 = a ^ b;
    else if (wide_lanes) y1 = { {{- r64 }}};
    else y1 = { {{- r32 }}};
    if (illegal) y1 = {{ w }}'d0;
end
{%- for k in 1..latency + 1 %}
reg  [{{ w + 2 }}:0] dl_{{ k }};
{%- endfor %}
always @(posedge clock) begin
    dl_1 <= {illegal, is_sum && is_f32, is_sum && is_f64, y1};
{%- for k in 2..latency + 1 %}
    dl_{{ k }} <= dl_{{ k - 1 }};
{%- endfor %}
end

// The adders see every flit (their valid pipelines are identical).
always @(*) begin
{%- for l in lanes %}
    {{ l.add }}$clock = clock;
    {{ l.add }}$reset = reset;
    {{ l.add }}$in_valid = in_valid;
    {{ l.add }}$a = {{ l.n }}_a;
    {{ l.add }}$b = {{ l.n }}_b;
{%- endfor %}
end
always @(*) begin
    out_valid = {{ valids }};
    bad = dl_{{ latency }}[{{ w + 2 }}];
    if (dl_{{ latency }}[{{ w + 1 }}]) y = { {{- s32 }}};
    else if (dl_{{ latency }}[{{ w }}]) y = { {{- s64 }}};
    else y = dl_{{ latency }}[{{ w - 1 }}:0];
end
