// {{ top }}: generated from hdl/templates/node/node_top.v (hdl/src/node.rs).
// The node top of one FPGA (the Vivado flow's top): `{{ core }}` with its
// coordinate straps tied from this module's parameters (set per FPGA by the
// block design; one FPGA is one node, so the straps are constants there).
module {{ top }} #(
{%- for s in straps %}
    // Coordinate `{{ s.0 }}` of this FPGA (exanet_sim::packet::coords layout).
    parameter [{{ s.1 - 1 }}:0] {{ s.2 }} = {{ s.1 }}'d0{% if !loop.last %},{% endif %}
{%- endfor %}
) (
{%- for p in ports %}
    {{ p }}{% if !loop.last %},{% endif %}
{%- endfor %}
);
{{ core }} core (
{%- for s in straps %}
    .{{ s.0 }}({{ s.2 }}),
{%- endfor %}
{%- for c in conns %}
    .{{ c }}({{ c }}){% if !loop.last %},{% endif %}
{%- endfor %}
);
endmodule // {{ top }}
