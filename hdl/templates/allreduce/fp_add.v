{# fp_add: pipelined IEEE 754 adder (see allreduce/fp_add.rs for the stages and the names). #}
// Stage 1: unpack, order the operands by magnitude, exponent difference, specials.
wire        a_sign = a[{{ w - 1 }}];
wire        b_sign = b[{{ w - 1 }}];
wire [{{ e - 1 }}:0] a_exp = a[{{ w - 2 }}:{{ m }}];
wire [{{ e - 1 }}:0] b_exp = b[{{ w - 2 }}:{{ m }}];
wire        a_nan = (a_exp == {{ e_ones }}) && (a[{{ m - 1 }}:0] != {{ m }}'d0);
wire        b_nan = (b_exp == {{ e_ones }}) && (b[{{ m - 1 }}:0] != {{ m }}'d0);
wire        a_inf = (a_exp == {{ e_ones }}) && (a[{{ m - 1 }}:0] == {{ m }}'d0);
wire        b_inf = (b_exp == {{ e_ones }}) && (b[{{ m - 1 }}:0] == {{ m }}'d0);
// Magnitudes order like unsigned integers: x is the larger operand.
wire        swap = b[{{ w - 2 }}:0] > a[{{ w - 2 }}:0];
wire [{{ w - 1 }}:0] x = swap ? b : a;
wire [{{ w - 2 }}:0] y = swap ? a[{{ w - 2 }}:0] : b[{{ w - 2 }}:0];
wire        x_norm = x[{{ w - 2 }}:{{ m }}] != {{ e }}'d0;
wire        y_norm = y[{{ w - 2 }}:{{ m }}] != {{ e }}'d0;
// Subnormals have the exponent of the smallest normal, without the hidden bit.
wire [{{ e - 1 }}:0] x_e1 = x_norm ? x[{{ w - 2 }}:{{ m }}] : {{ e }}'d1;
wire [{{ e - 1 }}:0] y_e1 = y_norm ? y[{{ w - 2 }}:{{ m }}] : {{ e }}'d1;
wire        inf_minus_inf = a_inf && b_inf && (a_sign != b_sign);
reg         s1_sign;
reg  [{{ e - 1 }}:0] s1_e1;
reg  [{{ p - 1 }}:0] s1_xsig;
reg  [{{ p - 1 }}:0] s1_ysig;
reg  [{{ e - 1 }}:0] s1_d;
reg         s1_sub;
reg         s1_zsign;
reg         s1_spec;
reg  [{{ w - 1 }}:0] s1_spec_val;
always @(posedge clock) begin
    s1_sign <= x[{{ w - 1 }}];
    s1_e1 <= x_e1;
    s1_xsig <= {x_norm, x[{{ m - 1 }}:0]};
    s1_ysig <= {y_norm, y[{{ m - 1 }}:0]};
    s1_d <= x_e1 - y_e1;
    s1_sub <= a_sign != b_sign;
    // Sign of an exact zero sum under round to nearest: -0 only for -0 + -0.
    s1_zsign <= a_sign && b_sign;
    s1_spec <= a_nan || b_nan || a_inf || b_inf;
    s1_spec_val <= (a_nan || b_nan || inf_minus_inf) ? {{ nan }} : (a_inf ? a : b);
end

// Stage 2: align the smaller significand; guard, round and sticky bits.
wire [{{ sw - 1 }}:0] s1_dd = (s1_d > {{ e }}'d{{ t }}) ? {{ sw }}'d{{ t }} : s1_d[{{ sw - 1 }}:0];
wire [{{ 2 * t - 1 }}:0] s1_wide = {s1_ysig, 2'd0, {{ t }}'d0} >> s1_dd;
reg         s2_sign;
reg  [{{ e - 1 }}:0] s2_e1;
reg  [{{ p - 1 }}:0] s2_xsig;
reg  [{{ t }}:0] s2_ysig;
reg         s2_sub;
reg         s2_zsign;
reg         s2_spec;
reg  [{{ w - 1 }}:0] s2_spec_val;
always @(posedge clock) begin
    s2_sign <= s1_sign;
    s2_e1 <= s1_e1;
    s2_xsig <= s1_xsig;
    s2_ysig <= {s1_wide[{{ 2 * t - 1 }}:{{ t }}], |s1_wide[{{ t - 1 }}:0]};
    s2_sub <= s1_sub;
    s2_zsign <= s1_zsign;
    s2_spec <= s1_spec;
    s2_spec_val <= s1_spec_val;
end

// Stage 3: add or subtract (|x| >= |y|, so the difference is never negative).
wire [{{ n - 1 }}:0] s2_xs = {1'b0, s2_xsig, 3'd0};
wire [{{ n - 1 }}:0] s2_ys = {1'b0, s2_ysig};
reg         s3_sign;
reg  [{{ e - 1 }}:0] s3_e1;
reg  [{{ n - 1 }}:0] s3_s;
reg         s3_zsign;
reg         s3_spec;
reg  [{{ w - 1 }}:0] s3_spec_val;
always @(posedge clock) begin
    s3_sign <= s2_sign;
    s3_e1 <= s2_e1;
    s3_s <= s2_sub ? s2_xs - s2_ys : s2_xs + s2_ys;
    s3_zsign <= s2_zsign;
    s3_spec <= s2_spec;
    s3_spec_val <= s2_spec_val;
end

// Stage 4: leading zeros of the sum; the left shift stops where the
// exponent reaches the smallest normal's (the result is then subnormal).
reg  [{{ lzw - 1 }}:0] s3_lz;
always @(*) begin
    s3_lz = {{ lzw }}'d{{ n }};
{%- for i in 0..n %}
    if (s3_s[{{ i }}]) s3_lz = {{ lzw }}'d{{ n - 1 - i }};
{%- endfor %}
end
wire [{{ lzw - 1 }}:0] s3_sh = ({ {{- pad_lz }}s3_lz} > s3_e1) ? s3_e1[{{ lzw - 1 }}:0] : s3_lz;
reg         s4_sign;
reg  [{{ e - 1 }}:0] s4_e1;
reg  [{{ n - 1 }}:0] s4_s;
reg  [{{ lzw - 1 }}:0] s4_sh;
reg         s4_zero;
reg         s4_zsign;
reg         s4_spec;
reg  [{{ w - 1 }}:0] s4_spec_val;
always @(posedge clock) begin
    s4_sign <= s3_sign;
    s4_e1 <= s3_e1;
    s4_s <= s3_s;
    s4_sh <= s3_sh;
    s4_zero <= s3_s == {{ n }}'d0;
    s4_zsign <= s3_zsign;
    s4_spec <= s3_spec;
    s4_spec_val <= s3_spec_val;
end

// Stage 5: normalize; exponent field, round increment, overflow.
wire [{{ n - 1 }}:0] s4_norm = s4_s << s4_sh;
wire [{{ e - 1 }}:0] s4_eres = s4_e1 + {{ e }}'d1 - { {{- pad_sh }}s4_sh};
wire [{{ e + m - 1 }}:0] s4_packed = {s4_norm[{{ n - 1 }}] ? s4_eres : {{ e }}'d0, s4_norm[{{ n - 2 }}:4]};
reg         s5_sign;
reg  [{{ e + m - 1 }}:0] s5_packed;
reg         s5_inc;
reg         s5_overflow;
reg         s5_zero;
reg         s5_zsign;
reg         s5_spec;
reg  [{{ w - 1 }}:0] s5_spec_val;
always @(posedge clock) begin
    s5_sign <= s4_sign;
    s5_packed <= s4_packed;
    // Round to nearest, ties to even: guard and (sticky or lsb).
    s5_inc <= s4_norm[3] && ((|s4_norm[2:0]) || s4_norm[4]);
    s5_overflow <= s4_norm[{{ n - 1 }}] && (s4_eres == {{ e_ones }});
    s5_zero <= s4_zero;
    s5_zsign <= s4_zsign;
    s5_spec <= s4_spec;
    s5_spec_val <= s4_spec_val;
end

// Stage 6: round (a carry out of the fraction moves into the exponent,
// and from the largest finite number into Inf) and select the result.
wire [{{ e + m - 1 }}:0] s5_rounded = s5_packed + { {{- e + m - 1 }}'d0, s5_inc};
reg  [{{ w - 1 }}:0] s6_sum;
reg  [{{ latency - 1 }}:0] vld;
initial vld = {{ latency }}'d0;
always @(posedge clock) begin
    s6_sum <= s5_spec ? s5_spec_val
        : s5_zero ? {s5_zsign, {{ w - 1 }}'d0}
        : s5_overflow ? {s5_sign, {{ e_ones }}, {{ m }}'d0}
        : {s5_sign, s5_rounded};
    vld <= reset ? {{ latency }}'d0 : {vld[{{ latency - 2 }}:0], in_valid};
end
always @(*) begin
    sum = s6_sum;
    out_valid = vld[{{ latency - 1 }}];
end
