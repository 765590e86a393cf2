// {{ top }}: generated from hdl/templates/board/gth_lane_pair.v (hdl/src/transceiver.rs).
// Co-simulation top (exanet cosim gth_lane): two GTH lane adapters
// `{{ lane }}`, `a` and `b`, on one clock. Every adapter port but `clk` is a
// top port prefixed `a_` / `b_`; the bench joins each adapter's gt_tx* to the
// other's gt_rx* through its model of the GTH gearbox and the serial line.
module {{ top }} (
    input wire clock,
{%- for p in ports %}
    {{ p }}{% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- for x in sides %}

{{ lane }} {{ x }} (
    .clk(clock),
{%- for c in conns %}
    .{{ c }}({{ x }}_{{ c }}){% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- endfor %}
endmodule // {{ top }}
