//! `axi_master`: the AR channel of the NI's AXI4 master (generated
//! Verilog, part of the `ni` top). Read data are consumed by
//! [`super::rdma_tx`].
//!
//! Per RDMA write or read response packet of `n` bytes from source `s`: `ceil((s mod 16 +
//! n) / 16)` beats of 16 bytes from `s` rounded down to 16, INCR, split
//! into two bursts where they would cross a 4 KiB boundary; ARUSER = the
//! transfer's PDID (the channel's, or the read request's; for the
//! system's SMMU). The AR of a packet is issued after its LOAD; the
//! scheduler picks the next packet only once every AR of the previous one
//! is accepted, so ARUSER is always the last picked packet's PDID. Up to
//! `tx_ahead` ([`super::rdma_tx`]) packets' bursts are outstanding; data must
//! return in order (one ID); RREADY is driven by the realigner
//! ([`super::rdma_tx`]).

use super::top::Geometry;
use anyhow::Result;

const BODY: &str = r#"
// ===================== axi_master =====================
reg        ar_v;
reg        ar2_v;
reg [@ABM1@:0] ar_addr;
reg [@ABM1@:0] ar2_addr;
reg  [7:0] ar_len;
reg  [7:0] ar2_len;
always @(posedge clock) begin
    if (reset) begin
        ar_v <= 1'b0;
        ar2_v <= 1'b0;
    end else if (eng_load && l_data) begin
        ar_v <= 1'b1;
        ar_addr <= {l_src[@ABM1@:4], 4'd0};
        ar_len <= {3'd0, (l_split ? l_topage[4:0] : l_beats) - 5'd1};
        ar2_v <= l_split;
        ar2_addr <= {l_src[@ABM1@:12] + @AB12@'d1, 12'd0};
        ar2_len <= {3'd0, l_beats - l_topage[4:0] - 5'd1};
    end else if (ar_v && m_arready) begin
        if (ar2_v) begin
            ar_addr <= ar2_addr;
            ar_len <= ar2_len;
            ar2_v <= 1'b0;
        end else ar_v <= 1'b0;
    end
end
always @(*) begin
    m_arvalid = ar_v;
    m_araddr = @ARADDR@;
    m_arlen = ar_len;
    m_arsize = 3'd4;
    m_arburst = 2'd1;
    m_aruser = e_pdid;
end
"#;

/// The Verilog of the AR channel.
pub fn verilog(g: &Geometry) -> Result<String> {
    let ab = g.p.ni.addr_bits as usize;
    let araddr = if ab == 42 {
        "ar_addr".to_string()
    } else {
        format!("{{{}'d0, ar_addr}}", 42 - ab)
    };
    g.fill_with(BODY, &[("AB12", (ab - 12).to_string()), ("ARADDR", araddr)])
}
