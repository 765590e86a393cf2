
// ===================== axi_master =====================
reg        ar_v;
reg        ar2_v;
reg [{{ k.abm1 }}:0] ar_addr;
reg [{{ k.abm1 }}:0] ar2_addr;
reg  [7:0] ar_len;
reg  [7:0] ar2_len;
always @(posedge clock) begin
    if (reset) begin
        ar_v <= 1'b0;
        ar2_v <= 1'b0;
    end else if (eng_load && l_data) begin
        ar_v <= 1'b1;
        ar_addr <= {l_src[{{ k.abm1 }}:4], 4'd0};
        ar_len <= {3'd0, (l_split ? l_topage[4:0] : l_beats) - 5'd1};
        ar2_v <= l_split;
        ar2_addr <= {l_src[{{ k.abm1 }}:12] + {{ ab12 }}'d1, 12'd0};
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
    m_araddr = {{ araddr }};
    m_arlen = ar_len;
    m_arsize = 3'd4;
    m_arburst = 2'd1;
    m_aruser = e_pdid;
{%- if k.ar %}
    // The allreduce copy's bursts (no transmit read is issued then).
    if (cp_arv) begin
        m_arvalid = 1'b1;
        m_araddr = cp_araddr;
        m_arlen = cp_arlen;
        m_aruser = ar_pdid;
    end
{%- endif %}
end

