// {{ top }}: generated from hdl/templates/node/node.v (hdl/src/node.rs).
// One node: NI `{{ ni }}` + ejection adapter `{{ eject }}` on the local port of
// router `{{ router }}`, and per network port of the router one link end
// (`{{ link_tx }}` + `{{ link_rx }}`) whose PHY words cross into the
// transceiver's user clock through `{{ fifo }}` (TX: PL -> user clock) and back
// (RX: user clock -> PL). Allreduce engine: not in this node yet (no RTL).
// Coordinates are inputs (straps): `{{ wrapper }}` ties them from its
// parameters (the Vivado flow's top); a co-simulation top ties constants, so
// every node of a bench is one instance of this one module.
module {{ top }} (
{%- for s in straps %}
    input wire [{{ s.1 - 1 }}:0] {{ s.0 }},
{%- endfor %}
{%- for p in ports %}
    {{ p }}{% if !loop.last %},{% endif %}
{%- endfor %}
);
// The NI's coordinates word, laid out as exanet_sim::packet::coords says.
wire [21:0] node_coords = {{ coords }};

// PL-domain reset: `rst` (the PS reset, PL clock) through a synchronizer.
wire pl_rst;
{{ reset_sync }} rst_sync_pl (
    .clock(clk),
    .reset_in(rst),
    .reset(pl_rst)
);

// Inputs the NI does not take (see the module doc in hdl/src/node.rs):
// AXI IDs (one ID, in-order responses), read response and RLAST (the NI
// counts beats), write strobes and AxPROT[2:1] of the register slave.
wire unused_inputs = &{1'b0{% for u in unused_inputs %}, {{ u }}{% endfor %}};
{%- for w in wires %}
wire {{ w }};
{%- endfor %}
{%- for a in assigns %}
assign {{ a }};
{%- endfor %}
{%- for i in insts %}

{{ i.module }} {{ i.name }} (
{%- for c in i.conns %}
    .{{ c.0 }}({{ c.1 }}){% if !loop.last %},{% endif %}
{%- endfor %}
);
{%- endfor %}
{%- for l in links %}

// ---- Link {{ l.0 }}: router network port {{ l.0 }} <-> link{{ l.0 }}_* (transceiver user clock).
// User-clock reset: `rst` synchronized into link{{ l.0 }}_user_clk.
wire link{{ l.0 }}_rst_user;
{{ reset_sync }} rst_sync_user{{ l.0 }} (
    .clock(link{{ l.0 }}_user_clk),
    .reset_in(rst),
    .reset(link{{ l.0 }}_rst_user)
);
// channel_up into the PL domain as link_rx's phy_lane_up (down at power-on).
wire l{{ l.0 }}_lane_down;
{{ reset_sync }} up_sync{{ l.0 }} (
    .clock(clk),
    .reset_in(~link{{ l.0 }}_channel_up),
    .reset(l{{ l.0 }}_lane_down)
);
assign l{{ l.0 }}_phy_lane_up = ~l{{ l.0 }}_lane_down;
// TX crossing: link_tx's word (held until taken) enters while the FIFO is not
// full; the transceiver takes the FIFO's head on tready.
wire l{{ l.0 }}_tx_full;
wire l{{ l.0 }}_tx_empty;
wire [{{ fifo_msb }}:0] l{{ l.0 }}_tx_dout;
wire unused_l{{ l.0 }}_tx_overflow;
wire unused_l{{ l.0 }}_tx_underflow;
wire [{{ count_msb }}:0] unused_l{{ l.0 }}_tx_wr_count;
wire [{{ count_msb }}:0] unused_l{{ l.0 }}_tx_rd_count;
assign l{{ l.0 }}_phy_tx_ready = ~l{{ l.0 }}_tx_full;
{{ fifo }} tx_fifo{{ l.0 }} (
    .wr_clock(clk),
    .wr_reset(pl_rst),
    .push(l{{ l.0 }}_phy_tx_valid & ~l{{ l.0 }}_tx_full),
    .din({l{{ l.0 }}_phy_tx_ctrl, l{{ l.0 }}_phy_tx_data}),
    .full(l{{ l.0 }}_tx_full),
    .overflow(unused_l{{ l.0 }}_tx_overflow),
    .wr_count(unused_l{{ l.0 }}_tx_wr_count),
    .rd_clock(link{{ l.0 }}_user_clk),
    .rd_reset(link{{ l.0 }}_rst_user),
    .pop(~l{{ l.0 }}_tx_empty & link{{ l.0 }}_tx_tready),
    .dout(l{{ l.0 }}_tx_dout),
    .empty(l{{ l.0 }}_tx_empty),
    .underflow(unused_l{{ l.0 }}_tx_underflow),
    .rd_count(unused_l{{ l.0 }}_tx_rd_count)
);
assign link{{ l.0 }}_tx_tvalid = ~l{{ l.0 }}_tx_empty;
assign link{{ l.0 }}_tx_tdata = l{{ l.0 }}_tx_dout[{{ ctrl_bit - 1 }}:0];
assign link{{ l.0 }}_tx_ctrl = l{{ l.0 }}_tx_dout[{{ ctrl_bit }}];
// RX crossing: every received word is pushed (Aurora has no RX backpressure);
// the PL side pops one word per cycle into link_rx. A word arriving at a full
// FIFO is lost and counted in rx_overflows_{{ l.0 }} (user-clock domain; it
// cannot happen while the PL clock is at least as fast as the user clock).
wire l{{ l.0 }}_rx_full;
wire l{{ l.0 }}_rx_empty;
wire [{{ fifo_msb }}:0] l{{ l.0 }}_rx_dout;
wire unused_l{{ l.0 }}_rx_overflow;
wire unused_l{{ l.0 }}_rx_underflow;
wire [{{ count_msb }}:0] unused_l{{ l.0 }}_rx_wr_count;
wire [{{ count_msb }}:0] unused_l{{ l.0 }}_rx_rd_count;
reg [31:0] rx_overflows_{{ l.0 }} = 32'd0;
always @(posedge link{{ l.0 }}_user_clk) begin
    if (link{{ l.0 }}_rst_user) rx_overflows_{{ l.0 }} <= 32'd0;
    else if (link{{ l.0 }}_rx_tvalid && l{{ l.0 }}_rx_full) rx_overflows_{{ l.0 }} <= rx_overflows_{{ l.0 }} + 32'd1;
end
// Read by the co-simulation (and an ILA).
wire [31:0] unused_rx_overflows_{{ l.0 }} = rx_overflows_{{ l.0 }};
// rx_overflows_{{ l.0 }} for link_status (PL domain): its Gray code, registered
// on the user clock (one bit changes per edge), through ASYNC_REG flip-flops
// on clk (cell names match the XDC's Gray-pointer patterns *_gray_reg* and
// *_gray_sync0_reg*, so it gets the same max-delay and bus-skew constraints),
// back to binary by a prefix XOR (golden: exanet_sim::node::from_gray).
reg [31:0] l{{ l.0 }}_rx_ovf_gray = 32'd0;
always @(posedge link{{ l.0 }}_user_clk) begin
    if (link{{ l.0 }}_rst_user) l{{ l.0 }}_rx_ovf_gray <= 32'd0;
    else l{{ l.0 }}_rx_ovf_gray <= rx_overflows_{{ l.0 }} ^ (rx_overflows_{{ l.0 }} >> 1);
end
{%- for k in sync_stages %}
(* ASYNC_REG = "TRUE" *) reg [31:0] l{{ l.0 }}_rx_ovf_gray_sync{{ k }} = 32'd0;
{%- endfor %}
always @(posedge clk) begin
    if (pl_rst) begin
{%- for k in sync_stages %}
        l{{ l.0 }}_rx_ovf_gray_sync{{ k }} <= 32'd0;
{%- endfor %}
    end else begin
        l{{ l.0 }}_rx_ovf_gray_sync0 <= l{{ l.0 }}_rx_ovf_gray;
{%- for k in sync_pairs %}
        l{{ l.0 }}_rx_ovf_gray_sync{{ k.0 }} <= l{{ l.0 }}_rx_ovf_gray_sync{{ k.1 }};
{%- endfor %}
    end
end
wire [31:0] l{{ l.0 }}_rx_ovf_x16 = l{{ l.0 }}_rx_ovf_gray_sync{{ sync_last }} ^ (l{{ l.0 }}_rx_ovf_gray_sync{{ sync_last }} >> 16);
wire [31:0] l{{ l.0 }}_rx_ovf_x8 = l{{ l.0 }}_rx_ovf_x16 ^ (l{{ l.0 }}_rx_ovf_x16 >> 8);
wire [31:0] l{{ l.0 }}_rx_ovf_x4 = l{{ l.0 }}_rx_ovf_x8 ^ (l{{ l.0 }}_rx_ovf_x8 >> 4);
wire [31:0] l{{ l.0 }}_rx_ovf_x2 = l{{ l.0 }}_rx_ovf_x4 ^ (l{{ l.0 }}_rx_ovf_x4 >> 2);
assign l{{ l.0 }}_rx_overflows_pl = l{{ l.0 }}_rx_ovf_x2 ^ (l{{ l.0 }}_rx_ovf_x2 >> 1);
{{ fifo }} rx_fifo{{ l.0 }} (
    .wr_clock(link{{ l.0 }}_user_clk),
    .wr_reset(link{{ l.0 }}_rst_user),
    .push(link{{ l.0 }}_rx_tvalid),
    .din({link{{ l.0 }}_rx_ctrl, link{{ l.0 }}_rx_tdata}),
    .full(l{{ l.0 }}_rx_full),
    .overflow(unused_l{{ l.0 }}_rx_overflow),
    .wr_count(unused_l{{ l.0 }}_rx_wr_count),
    .rd_clock(clk),
    .rd_reset(pl_rst),
    .pop(~l{{ l.0 }}_rx_empty),
    .dout(l{{ l.0 }}_rx_dout),
    .empty(l{{ l.0 }}_rx_empty),
    .underflow(unused_l{{ l.0 }}_rx_underflow),
    .rd_count(unused_l{{ l.0 }}_rx_rd_count)
);
assign l{{ l.0 }}_phy_rx_valid = ~l{{ l.0 }}_rx_empty;
assign l{{ l.0 }}_phy_rx_data = l{{ l.0 }}_rx_dout[{{ ctrl_bit - 1 }}:0];
assign l{{ l.0 }}_phy_rx_ctrl = l{{ l.0 }}_rx_dout[{{ ctrl_bit }}];
{%- endfor %}
endmodule // {{ top }}
