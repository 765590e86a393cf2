// {{ top }}: generated from hdl/templates/node/node_bench.v (hdl/src/node.rs).
// Co-simulation top: {{ nodes.len() }} `{{ node }}` instances, one per node of the
// {{ dims }} network, each with its coordinates on its straps (one module for
// every node, so Verilator builds the node once); every port of node n is a
// top port prefixed n<n>_ (its clocks too, so a bench drives each node's PL
// clock and each link's user clock on its own). The links between the nodes
// are outside: the bench joins the link<i>_* ports through its PHY model.
// n<n>_obs_<name>: node n's internal signal <name> (counters, status, the NI's
// observability outputs: no node port carries them), read for the bench
// through a hierarchical reference.
module {{ top }} (
{%- for p in ports %}
    {{ p }}{% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- for n in nodes %}
{{ node }} node_n{{ n.0 }} (
{%- for s in n.1 %}
    .{{ s }},
{%- endfor %}
{%- for c in conns %}
    .{{ c }}(n{{ n.0 }}_{{ c }}){% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- for o in observed %}
assign n{{ n.0 }}_obs_{{ o }} = node_n{{ n.0 }}.{{ o }};
{%- endfor %}
{%- endfor %}
endmodule // {{ top }}
