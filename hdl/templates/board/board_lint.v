// {{ top }}: generated from hdl/templates/board/board_lint.v (hdl/src/transceiver.rs).
// The node flow transceiver wiring for fpga.transceiver = "{{ transceiver }}", for a
// lint-only model: the node, its lane adapters and the vendor IP (black
// boxes above) joined by the same connection list vivado/node.tcl's
// connect_bd_net commands come from (exanet_hdl::transceiver::link_nets).
// Pins on no net, and the block-design cells outside this wiring (PS clock,
// reset generator, reference-clock buffer), are ports of this module.
module {{ top }} (
{%- for p in ports %}
    {{ p }}{% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- for w in wires %}
{{ w }}
{%- endfor %}
{%- for i in insts %}

{{ i.module }} {{ i.name }} (
{%- for c in i.conns %}
    .{{ c.0 }}({{ c.1 }}){% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- endfor %}
endmodule // {{ top }}
