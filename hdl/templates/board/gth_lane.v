// {{ top }}: generated from hdl/templates/board/gth_lane.v (hdl/src/transceiver.rs).
// One link's lane adapter between the node's PHY ports (link<i>_*, in the
// transceiver user clock) and a gtwizard_ultrascale GTH channel in 64B/66B
// gearbox mode, around the project's 64B/66B PCS `{{ pcs }}`. Every code
// below comes from the golden model exanet_sim::link::pcs (sync headers,
// idle block, gearbox sequence).
//
// TX: the wizard's TX synchronous gearbox takes 32 blocks in 33 user
// cycles: TXSEQUENCE counts 0..{{ seq_max }} and the word offered at {{ seq_max }} is not
// taken, so tx_tready drops then. The PCS registers its block, so
// TXSEQUENCE is delayed by the same cycle. A serial line always carries a
// block: when the node has no word the PCS sends the idle block (control
// header, payload {{ idle_word }}: a control-word kind the link layer never
// sends) and the receiving adapter drops it.
// RX: RXDATAVALID[0] & RXHEADERVALID[0] mark a block; words are passed on
// only while the PCS has block lock (channel_up), idle blocks dropped.
//
// UNVERIFIED without Vivado/hardware, and why it is safe either way:
// - TXHEADER/RXHEADER bit order on the line: the PCS drives data = 2'b01,
//   control = {{ hdr_ctrl }} on TXHEADER[1:0] and reads RXHEADER[1:0] the same
//   way; both ends of a link are this adapter on the same GTH, so the
//   receiver sees the header value the sender wrote whatever the serial
//   order (it matters only against a third-party 10GBASE-R PCS). The same
//   holds for the payload bit order and the scrambler.
// - Whether the 10GBASE-R preset's gearbox is the synchronous one (which
//   obeys TXSEQUENCE) or the asynchronous one (which ignores it and takes a
//   block every cycle of a 156.25 MHz user clock): in the latter, the pause
//   cycle's block goes out with an invalid header (2'b00, below), which the
//   far PCS drops and counts (cnt_invalid_headers) without losing lock, and
//   no node word is lost or repeated.
// - The reset-done flags' clock domain (PG182 does not say it is
//   TXUSRCLK2): they are synchronized here.
module {{ top }} (
{%- for p in ports %}
    {{ p }}{% if !loop.last %},{% endif %}
{%- endfor %}
);
// Reset until the wizard's TX and RX resets are done (asynchronous assert,
// synchronous release; the cell name matches the node XDC's false path).
wire gt_done = gt_tx_done & gt_rx_done;
(* ASYNC_REG = "TRUE" *) reg [1:0] rst_sync_reg = 2'b11;
always @(posedge clk or negedge gt_done) begin
    if (!gt_done) rst_sync_reg <= 2'b11;
    else rst_sync_reg <= {rst_sync_reg[0], 1'b0};
end
wire reset = rst_sync_reg[1];
// PG182: the TX user-clocking helper stays in reset until TXPMARESETDONE.
assign gt_userclk_tx_reset = ~gt_txpmaresetdone;

// ---- TX ----
reg [{{ seq_bits - 1 }}:0] seq = {{ seq_bits }}'d0;
// seq_q starts at the pause value, so TXSEQUENCE counts 32, 0, 1, .. from
// power-on without a break.
reg [{{ seq_bits - 1 }}:0] seq_q = {{ seq_bits }}'d{{ seq_max }};
wire pause = seq == {{ seq_bits }}'d{{ seq_max }};
always @(posedge clk) begin
    seq <= pause ? {{ seq_bits }}'d0 : seq + {{ seq_bits }}'d1;
    seq_q <= seq;
end
assign tx_tready = ~reset & ~pause;
wire take = tx_tvalid & tx_tready;
wire pcs_tx_valid;
wire [1:0] pcs_txheader;
assign gt_txsequence = seq_q;
// An invalid header (2'b00) on the cycle the PCS offers no block.
assign gt_txheader = { {{ hdr_bits - 2 }}'d0, pcs_tx_valid ? pcs_txheader : 2'b00 };

// ---- RX ----
wire pcs_rx_valid;
wire [63:0] pcs_rx_data;
wire pcs_rx_ctrl;
wire pcs_lock;
wire idle = pcs_rx_ctrl & (pcs_rx_data == {{ idle_word }});
assign rx_tvalid = pcs_rx_valid & ~idle;
assign rx_tdata = pcs_rx_data;
assign rx_ctrl = pcs_rx_ctrl;
assign block_lock = pcs_lock;
assign channel_up = pcs_lock & ~reset;
// Bits the 64B/66B gearbox with a 64-bit interface leaves unused (PG182:
// headers in bits 1:0, valids in bit 0).
wire unused_gt_rx = &{1'b0, gt_rxheader[{{ hdr_bits - 1 }}:2], gt_rxheadervalid[{{ valid_bits - 1 }}:1], gt_rxdatavalid[{{ valid_bits - 1 }}:1]};

{{ pcs }} pcs (
    .clock(clk),
    .reset(reset),
    .tx_valid(~pause),
    .tx_data(take ? tx_tdata : {{ idle_word }}),
    .tx_ctrl(take ? tx_ctrl : 1'b1),
    .gt_tx_valid(pcs_tx_valid),
    .gt_txheader(pcs_txheader),
    .gt_txdata(gt_txdata),
    .gt_rx_valid(gt_rxdatavalid[0] & gt_rxheadervalid[0]),
    .gt_rxheader(gt_rxheader[1:0]),
    .gt_rxdata(gt_rxdata),
    .rx_valid(pcs_rx_valid),
    .rx_data(pcs_rx_data),
    .rx_ctrl(pcs_rx_ctrl),
    .block_lock(pcs_lock),
    .gt_rxslip(gt_rxgearboxslip),
    .cnt_invalid_headers(cnt_invalid_headers),
    .cnt_lock_losses(cnt_lock_losses)
);
endmodule // {{ top }}
