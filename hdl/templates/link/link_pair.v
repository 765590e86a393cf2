// link_pair: generated from hdl/templates/link/link_pair.v.
// Both ends of one cable for co-simulation: per end e, the link_tx and link_rx
// modules exactly as `exanet generate` emits them, link_rx's status bus wired to
// link_tx inside; every other port exposed with prefix e<e>_ (counters as
// e<e>_tx_<name> and e<e>_rx_<name>). The PHY between the ends is outside.
module {{ top }}(
{%- for p in ports %}
    {{ p }}{% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- for w in wires %}
wire {{ w }};
{%- endfor %}
{%- for i in insts %}
{{ i.module }} {{ i.name }} (
{%- for c in i.conns %}
    .{{ c.0 }}({{ c.1 }}){% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- endfor %}
{%- for a in assigns %}
assign {{ a }};
{%- endfor %}
endmodule // {{ top }}

