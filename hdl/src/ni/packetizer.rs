//! `packetizer`: per-channel packetizer windows, message slots and send
//! queues (generated Verilog, part of the `ni` top).
//!
//! PKT_DATA writes fill the channel's window (32-bit registers, reset 0).
//! An accepted PKT_SEND copies the whole window into the lowest free slot
//! in one cycle (slot data are registers: `channels · pkt_slots ·
//! mailbox_msg_bytes` bytes), records length, PKT_DEST and the channel's
//! PDID, marks the slot queued and appends it to the channel's send queue.
//! The scheduler pops the queue head when it picks the message; the slot
//! then awaits its acknowledgement: a MailboxAck (or a final MailboxNack)
//! the receive path accepts frees it, a MailboxNack "full" or "payload
//! CRC" appends it to the channel's send queue again (same bytes).
//! `msg_word` is payload word `jp` of the message the sender is sending
//! (slot `b_slot` of channel `b_c`).

use super::top::Geometry;
use anyhow::Result;
use std::fmt::Write as _;

const DECL: &str = r#"
// ===================== packetizer =====================
reg [31:0] pw [0:@PWN@];
reg [31:0] ps_data [0:@PSDN@];
reg  [1:0] ps_state [0:@PSN@];
reg  [8:0] ps_len [0:@PSN@];
reg [21:0] ps_dest [0:@PSN@];
reg [15:0] ps_pdid [0:@PSN@];
reg [@SAM1@:0] pq_mem [0:@PSN@];
reg [@SAM1@:0] pq_head [0:@NCM1@];
reg [@SAM1@:0] pq_tail [0:@NCM1@];
reg [@SWM1@:0] pq_count [0:@NCM1@];
reg [@SWM1@:0] pk_free [0:@NCM1@];
reg [@SAM1@:0] pq_slot;
reg        ps_found;
reg [@SAM1@:0] ps_slot;
reg [127:0] msg_word;
"#;

/// The Verilog of the packetizer.
pub fn verilog(g: &Geometry) -> Result<String> {
    let nc = 1usize << g.cw;
    let sn = 1usize << g.sa;
    let wn = 1usize << g.mwa;
    let mut s = g.fill_with(
        DECL,
        &[
            ("PWN", (nc * wn - 1).to_string()),
            ("PSDN", (nc * sn * wn - 1).to_string()),
            ("PSN", (nc * sn - 1).to_string()),
        ],
    )?;
    // Lowest free slot of the channel being written.
    s.push_str("always @(*) begin\n    ps_found = 1'b0;\n");
    let _ = writeln!(s, "    ps_slot = {}'d0;", g.sa);
    for k in (0..g.s).rev() {
        let sl = Geometry::lit(g.sa, k);
        let _ = writeln!(
            s,
            "    if (ps_state[{{w_ch, {sl}}}] == 2'd0) begin ps_found = 1'b1; ps_slot = {sl}; end"
        );
    }
    s.push_str("end\n");
    // The head of the picked channel's send queue, and the payload word.
    s.push_str("always @(*) begin\n    pq_slot = pq_mem[{e_c, pq_head[e_c]}];\n");
    let word = |k: usize| {
        if g.mwa == 2 {
            format!("ps_data[{{b_c, b_slot, 2'd{k}}}]")
        } else {
            format!("ps_data[{{b_c, b_slot, jp[{}:0], 2'd{k}}}]", g.mwa - 3)
        }
    };
    let _ = writeln!(
        s,
        "    msg_word = {{{}, {}, {}, {}}};\nend",
        word(3),
        word(2),
        word(1),
        word(0)
    );
    // Window registers (reset 0).
    s.push_str("always @(posedge clock) begin\n    if (reset) begin\n");
    for c in 0..nc {
        for w in 0..wn {
            let _ = writeln!(
                s,
                "        pw[{{{}, {}}}] <= 32'd0;",
                Geometry::lit(g.cw, c),
                Geometry::lit(g.mwa, w)
            );
        }
    }
    let _ = writeln!(
        s,
        "    end else if (wr_fire && a_pdata) pw[{{w_ch, w_off[{}:2]}}] <= s_wdata;\nend",
        g.mwa + 1
    );
    // Slot data: the whole window, copied in one cycle.
    s.push_str(
        "always @(posedge clock) begin\n    if (wr_fire && a_psend && (ps_code == 4'd0)) begin\n",
    );
    for w in 0..g.mw {
        let wl = Geometry::lit(g.mwa, w);
        let _ = writeln!(
            s,
            "        ps_data[{{w_ch, ps_slot, {wl}}}] <= pw[{{w_ch, {wl}}}];"
        );
    }
    s.push_str("    end\nend\n");
    // Slot states and send queues.
    s.push_str("always @(posedge clock) begin\n    if (reset) begin\n");
    for c in 0..nc {
        let cl = Geometry::lit(g.cw, c);
        for k in 0..sn {
            let _ = writeln!(
                s,
                "        ps_state[{{{cl}, {}}}] <= 2'd0;",
                Geometry::lit(g.sa, k)
            );
        }
        let _ = writeln!(s, "        pq_head[{cl}] <= {}'d0;", g.sa);
        let _ = writeln!(s, "        pq_tail[{cl}] <= {}'d0;", g.sa);
        let _ = writeln!(s, "        pq_count[{cl}] <= {}'d0;", g.sa + 1);
        let _ = writeln!(s, "        pk_free[{cl}] <= {}'d{};", g.sa + 1, g.s);
    }
    s.push_str(&g.fill(
        r#"    end else begin
        if (wr_fire && a_psend && (ps_code == 4'd0)) begin
            ps_state[{w_ch, ps_slot}] <= 2'd1;
            ps_len[{w_ch, ps_slot}] <= s_wdata[8:0];
            ps_dest[{w_ch, ps_slot}] <= pkt_dest[w_ch];
            ps_pdid[{w_ch, ps_slot}] <= ch_pdid[w_ch];
            pq_mem[{w_ch, pq_tail[w_ch]}] <= ps_slot;
            pq_tail[w_ch] <= pq_tail[w_ch] + @SA@'d1;
            pq_count[w_ch] <= pq_count[w_ch] + @SW@'d1;
            pk_free[w_ch] <= pk_free[w_ch] - @SW@'d1;
        end
        if (pq_pop) begin
            ps_state[{e_c, pq_slot}] <= 2'd2;
            pq_head[e_c] <= pq_head[e_c] + @SA@'d1;
            pq_count[e_c] <= pq_count[e_c] - @SW@'d1;
        end
        // Acknowledgements (never in a cycle with a send or a pop): an ack
        // or a final nack frees the slot; a nack for "full" or a payload
        // CRC error queues the same message again.
        if (ak_fire) begin
            if (ak_retry) begin
                ps_state[k_idx] <= 2'd1;
                pq_mem[{k_c, pq_tail[k_c]}] <= k_t[@SAM1@:0];
                pq_tail[k_c] <= pq_tail[k_c] + @SA@'d1;
                pq_count[k_c] <= pq_count[k_c] + @SW@'d1;
            end else begin
                ps_state[k_idx] <= 2'd0;
                pk_free[k_c] <= pk_free[k_c] + @SW@'d1;
            end
        end
    end
end
"#,
    )?);
    Ok(s)
}
