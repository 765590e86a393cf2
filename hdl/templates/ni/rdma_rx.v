{# rdma_rx: the receive path (see ni/rdma_rx.rs). `{ {{- x }}` opens a concatenation with a generated value. #}
// ===================== rdma_rx =====================
reg  [2:0] rx_st;
reg [{{ rxa }}:0] rx_n;
reg [127:0] hdr_q;
reg [127:0] ftr_q;
reg [127:0] p1_q;
// Receive ring: every flit received, and its VC (for its credit).
(* ram_style = "distributed" *)
reg [127:0] rx_buf [0:{{ rxnm1 }}];
(* ram_style = "distributed" *)
reg  [3:0] rx_vcm [0:{{ rxnm1 }}];
// Class-1 ring (flits on VCs >= vcs_per_class).
(* ram_style = "distributed" *)
reg [127:0] r1_buf [0:{{ r1nm1 }}];
(* ram_style = "distributed" *)
reg  [3:0] r1_vcm [0:{{ r1nm1 }}];
reg [{{ rxam1 }}:0] in_wp;
reg [{{ r1am1 }}:0] in_wp1;
reg [{{ rxa }}:0] rv_n;
reg [127:0] hin_q;
// Received packets not yet loaded for a decision, per class: {words,
// payload CRC-32}.
{{ pm_queue }}
{{ pn_queue }}
reg [{{ rxam1 }}:0] dq_sp;
reg [{{ rxam1 }}:0] dq_nx;
reg [{{ rxam1 }}:0] dn_p;
reg [{{ rxam1 }}:0] fr_p;
reg [{{ r1am1 }}:0] dq_sp1;
reg [{{ r1am1 }}:0] dq_nx1;
reg [{{ r1am1 }}:0] dn_p1;
reg [{{ r1am1 }}:0] fr_p1;
// The class of the packet being decided; a class-0 packet that yielded to
// class 1 while Busy (its words stay at dq_sp) and its record.
reg        rx_cls;
reg        c0_park;
reg [{{ rxa }}:0] pk_n;
reg [31:0] pk_crc;
reg        rc_start;
reg        rc_valid;
reg [127:0] rc_data;
reg  [4:0] rc_bytes;
reg [31:0] rx_crc;
reg  [4:0] mw_k;
reg [127:0] mw_pq;
reg  [4:0] mw_beats;
reg  [3:0] mw_off;
reg  [8:0] mw_size;
reg [41:0] mw_addr;
// A write crossing a 4 KiB page (an allreduce fragment's may): two bursts,
// the first of `mw_b1` beats; `mw_p2` while the second is sent.
reg        mw_split;
reg  [4:0] mw_b1;
reg        mw_p2;
reg [15:0] mw_pdid;
reg [31:0] rx_packets;
reg [31:0] rx_rejected;
reg [31:0] rx_hdrc;
reg [31:0] rx_bytes;
reg [31:0] rej_cnt [0:{{ rejn - 1 }}];
// Error queue: {vaddr, size, pdid, src, txid, ptype, footer_ok, header_ok, reason}.
{{ eq_queue }}
// Completion queue: {pdid, peer, txid, reason, status, kind}.
{{ cq_queue }}
// Response queue: {flags, txid, pdid, dest, ptype}.
{{ rq_queue }}
// Read queue: {notify, txid, pdid, requester, len, landing address, source address}.
{{ rd_queue }}
// Mailbox: message words (2^mbwa per message) and {len, pdid, src}.
(* ram_style = "distributed" *)
reg [127:0] mb_mem [0:{{ mbwnm1 }}];
(* ram_style = "distributed" *)
reg [{{ r.mb.width() - 1 }}:0] mb_meta [0:{{ mbnm1 }}];
{{ mb_ptrs }}
reg  [4:0] mb_k;
reg        mb_cp;
// Damaged-transfer table: valid bits and {src, txid} keys.
reg [{{ k.pdm1 }}:0] tk_v;
reg [35:0] tk_key [0:{{ k.pdm1 }}];
reg        trk_lost;
reg        st_rxerr;
reg        st_eqovf;
reg        st_hdrc;
// AXI4 error responses: sticky STATUS.AXI_ERROR, the B error counters.
reg        st_axierr;
reg [31:0] rd_slverr;
reg [31:0] rd_decerr;
reg [31:0] wr_slverr;
reg [31:0] wr_decerr;
reg        w_err;
reg [{{ r.cq.width() - 1 }}:0] lp_cq_ent;
reg [{{ r.rq.width() - 1 }}:0] lp_rq_ent;
reg [31:0] mb_fulln;
reg [31:0] mb_retry;
reg [31:0] mb_denied;
reg [31:0] rd_busyn;
// Accepted data packets whose write has not landed (B), in order: the
// completion / notify response each posts then {cq?, cq entry, rq?, rq
// entry}; how many of them hold a completion / a response.
{{ lq_queue }}
reg  [4:0] lq_cqh;
reg  [4:0] lq_rqh;
// The packetizer message being sent (picked, tail flit not yet out): its
// NI-wide slot {channel, slot}.
reg        ms_v;
reg [{{ kiw }}:0] ms_idx;

// Queue states and the damaged-transfer table lookup of the packet's
// (src, txid): hits, and the lowest free entry (one-hot).
reg        mb_full;
reg        cq_full;
reg        rq_full;
reg        rd_full;
reg [{{ k.pdm1 }}:0] tk_h;
reg [{{ k.pdm1 }}:0] tk_f1;
reg        w_land;
reg [{{ r.lq.width() - 1 }}:0] lq_rd;
reg        lp_post;
always @(*) begin
    mb_full = (mb_count == {{ mbw }}'d{{ k.mbd }});
    // Entries of writes still landing hold their slots.
    cq_full = ({ {{- cqpad }}cq_count} + {11'd0, lq_cqh}{% if k.ar %} + { {{- lhpad }}lh_count}{% endif %}) >= 16'd{{ k.cqd }};
    // The response lane's pop of this cycle comes first (golden order).
    rq_full = ({ {{- rqpad }}rq_count} - {15'd0, rsp_go} + {11'd0, lq_rqh}) >= 16'd{{ k.rqd }};
    rd_full = (rd_count == {{ k.rdw }}'d{{ k.rdd }});
{%- for i in 0..k.pd %}
    tk_h[{{ i }}] = tk_v[{{ i }}] && (tk_key[{{ i }}] == {footer_unpack$src, footer_unpack$txid});
{%- endfor %}
    tk_f1 = ~tk_v & (tk_v + {{ k.pd }}'d1);
    // The oldest write in flight lands (B); what it posts.
    w_land = m_bvalid && (lq_count != 4'd0){% if k.ar %} && (!ar_hold || cb_drn || aq_wt){% endif %};
    lq_rd = lq_mem[lq_head];
    lp_post = w_land && (lq_rd{{ r.lq.at("cq_v") }} || lq_rd{{ r.lq.at("rq_v") }});
    // A B of SLVERR / DECERR (BRESP[1]): what the write posts says
    // MEM_ERROR (completion status, RdmaCompletion flags).
    w_err = w_land && m_bresp[1];
    lp_cq_ent = lq_rd{{ r.lq.at("cq") }};
    lp_rq_ent = lq_rd{{ r.lq.at("rq") }};
    if (w_err) begin
        lp_cq_ent{{ r.cq.at("status") }} = {{ c.cq.mem_error }};
        lp_rq_ent{{ r.rq.at("flags") }} = {{ c.fl.mem_error }};
    end
end

// Message-slot lookup of a MailboxAck / MailboxNack: txid = c * pkt_slots + slot.
reg        k_ok;
reg [{{ k.cwm1 }}:0] k_c;
reg [13:0] k_t;
reg [{{ kiw }}:0] k_idx;
reg        x_await;
always @(*) begin
    k_ok = 1'b0;
    k_c = {{ k.cw }}'d0;
    k_t = 14'd0;
{%- for ch in 0..k.c %}
    if ({% if ch > 0 %}(footer_unpack$txid >= 14'd{{ ch * k.s }}) && {% endif %}(footer_unpack$txid < 14'd{{ (ch + 1) * k.s }})) begin k_ok = 1'b1; k_c = {{ k.cw }}'d{{ ch }}; k_t = footer_unpack$txid - 14'd{{ ch * k.s }}; end
{%- endfor %}
    k_idx = {k_c, k_t[{{ k.sam1 }}:0]};
    // Not while the message is still being sent: no receiver answers a
    // packet before its tail, and the slot is still being read out.
    x_await = k_ok && (ps_state[k_idx] == 2'd2) && (ps_dest[k_idx] == footer_unpack$src)
              && (ps_pdid[k_idx] == header_unpack$pdid) && !(ms_v && (ms_idx == k_idx));
end

always @(*) begin
    header_unpack$word = hdr_q;
    footer_unpack$word = ftr_q;
    crc_rx$clock = clock;
    crc_rx$reset = reset;
    crc_rx$start = rc_start;
    crc_rx$valid = rc_valid;
    crc_rx$data = rc_data;
    crc_rx$bytes = rc_bytes;
    header_rx$word = hin_q;
end

// Checks, in the golden order.
reg [10:0] x_pw;
reg        x_wc_ok;
reg  [4:0] x_pt;
reg        x_tcls;
reg        x_data;
reg        x_single;
reg  [9:0] x_pmod;
reg        x_fmt;
reg        x_range_ok;
reg [127:0] x_p1;
reg [64:0] x_rqend;
reg [43:0] x_end;
reg        x_hold;
reg        x_pd;
reg  [3:0] x_reason;
reg        x_hok;
reg        x_fok;
reg        x_accept;
reg        x_mb;
reg        x_ack;
reg        x_last;
reg        x_tkhit;
reg  [{{ cqcm1 }}:0] x_st;
reg        x_rsp_rej;
reg        x_need_cq;
reg        x_need_rq;
reg        x_need_rd;
reg        x_rdbusy;
reg        x_prot;
reg        x_full;
reg        x_cp;
reg        x_try;
reg        x_commit;
reg        x_fe;
reg        x_frej;
reg        x_dw;
reg        x_busy;
reg        x_write;
reg        x_defer;
reg  [4:0] x_rq_pt;
reg  [7:0] x_rq_fl;
reg [{{ r.rq.width() - 1 }}:0] x_rq_ent;
reg  [{{ cqcm1 }}:0] x_cq_kind;
reg  [{{ cqcm1 }}:0] x_cq_st;
reg  [3:0] x_cq_rs;
reg [{{ r.cq.width() - 1 }}:0] x_cq_ent;
reg        ak_fire;
reg        ak_retry;
reg        ak_deny;
always @(*) begin
    x_pw = {1'b0, header_unpack$size[13:4]} + {10'd0, header_unpack$size[3:0] != 4'd0};
    x_wc_ok = ({ {{- rxnpad }}rx_n} == x_pw + 11'd2);
    x_pt = header_unpack$ptype;
    // The type's message class: control responses are class 1.
    x_tcls = (x_pt >= {{ c.pt.class1_lo.h() }}) && (x_pt <= {{ c.pt.class1_hi.h() }});
    x_data = (x_pt == {{ c.pt.rdma_write.h() }}) || (x_pt == {{ c.pt.rdma_read_resp.h() }});
    x_single = footer_unpack$first && footer_unpack$last && (footer_unpack$seq == 14'd0);
    x_pmod = { {{- pmodpad }}header_unpack$vaddr[{{ k.pam1 }}:0]} + {1'b0, header_unpack$size[8:0]};
    x_fmt = 1'b0;
    case (x_pt)
        {{ c.pt.rdma_write.h() }}, {{ c.pt.rdma_read_resp.h() }}: x_fmt = (header_unpack$size == 14'd0) || (header_unpack$size > 14'd{{ k.p }})
                              || (x_pmod > 10'd{{ k.p }});
        {{ c.pt.rdma_read_req.h() }}: x_fmt = !x_single || (header_unpack$size != {{ c.size.read_req_size }}) || (x_p1{{ c.bits.rr_zero }} != 32'd0)
                       || (x_p1{{ c.bits.rr_len }} == 32'd0) || (x_rqend > {{ c.size.vaddr_end65.hg() }});
        {{ c.pt.mailbox.h() }}: x_fmt = !x_single || (header_unpack$size == 14'd0) || (header_unpack$size > 14'd{{ k.mb }});
        {{ c.pt.rdma_completion.h() }}: x_fmt = !x_single || (header_unpack$size != 14'd0)
                                || ((footer_unpack$flags > {{ c.fl.completion_max }}) && (footer_unpack$flags != {{ c.fl.mem_error }}));
        {{ c.pt.nack.h() }}: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags == 8'd0)
                       || (footer_unpack$flags > {{ c.fl.read_busy }});
        {{ c.pt.mailbox_ack.h() }}: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags != {{ c.fl.ack }});
        {{ c.pt.mailbox_nack.h() }}: x_fmt = !x_single || (header_unpack$size != 14'd0) || (footer_unpack$flags > {{ c.fl.max_reason }});
        default: x_fmt = 1'b0;
    endcase
    x_p1 = p1_q;
    x_rqend = {1'b0, x_p1{{ c.bits.rr_land }}} + {33'd0, x_p1{{ c.bits.rr_len }}};
    // The range the protection check covers: a data packet's bytes, or the
    // bytes a read request asks for.
    x_prot = x_data || (x_pt == {{ c.pt.rdma_read_req.h() }});
    x_end = {2'd0, header_unpack$vaddr} + ((x_pt == {{ c.pt.rdma_read_req.h() }}) ? {12'd0, x_p1{{ c.bits.rr_len }}} : {30'd0, header_unpack$size});
    x_range_ok = (x_end <= 44'h{{ lim }});
    x_hold = 1'b0;
    x_pd = 1'b0;
{%- for w in 0..k.win %}
    if (win_en[{{ k.wa }}'d{{ w }}] && (header_unpack$vaddr >= {win_base_hi[{{ k.wa }}'d{{ w }}], win_base_lo[{{ k.wa }}'d{{ w }}]})
        && ({1'b0, x_end} <= {2'd0, win_base_hi[{{ k.wa }}'d{{ w }}], win_base_lo[{{ k.wa }}'d{{ w }}]} + {2'd0, win_size_hi[{{ k.wa }}'d{{ w }}], win_size_lo[{{ k.wa }}'d{{ w }}]})) begin
        x_hold = 1'b1;
        if (win_pdid[{{ k.wa }}'d{{ w }}] == header_unpack$pdid) x_pd = 1'b1;
    end
{%- endfor %}

    x_hok = 1'b0;
    x_fok = 1'b0;
    x_fe = 1'b0;
    x_reason = 4'd0;
    if (rx_n < {{ rxa1 }}'d2) x_reason = {{ c.rej.format }};
    else if (header_unpack$double_err) begin x_reason = {{ c.rej.header_ecc }}; x_fok = footer_unpack$crc8_ok; end
    else if (!header_unpack$ptype_known) begin x_reason = {{ c.rej.header_type }}; x_fok = footer_unpack$crc8_ok; end
    else begin
        x_hok = 1'b1;
        x_fok = footer_unpack$crc8_ok;
        if (!footer_unpack$crc8_ok) x_reason = {{ c.rej.footer_crc }};
        else if (!x_wc_ok) x_reason = {{ c.rej.format }};
        else if (header_unpack$dest != node) x_reason = {{ c.rej.misrouted }};
        else if (x_tcls != rx_cls) x_reason = {{ c.rej.wrong_class }};
        else if (rx_crc != footer_unpack$payload_crc) x_reason = {{ c.rej.payload_crc }};
{%- if k.ar %}
        else if (x_pt == {{ c.pt.ack.h() }}) x_reason = {{ c.rej.unsupported }};
        // A fragment: 1 <= size <= P here, the rest the engine's checks
        // (ar_recv.v), reported with their NI reason.
        else if ((x_pt == {{ c.pt.allreduce_fragment.h() }}) && ((header_unpack$size == 14'd0) || (header_unpack$size > 14'd{{ k.p }})))
            x_reason = {{ c.rej.format }};
        else if (x_pt == {{ c.pt.allreduce_fragment.h() }}) begin
            x_fe = 1'b1;
            x_reason = af_ni;
        end
{%- else %}
        else if ((x_pt == {{ c.pt.allreduce_fragment.h() }}) || (x_pt == {{ c.pt.ack.h() }})) x_reason = {{ c.rej.unsupported }};
{%- endif %}
        else if (x_fmt) x_reason = {{ c.rej.format }};
        else if (x_prot && !x_range_ok) x_reason = {{ c.rej.window }};
        else if (x_prot && !x_hold) x_reason = {{ c.rej.window }};
        else if (x_prot && !x_pd) x_reason = {{ c.rej.pdid }};
        else if ((x_pt == {{ c.pt.mailbox.h() }}) && !mbox_q{{ c.bits.mbox_open }} && (mbox_q{{ c.bits.mbox_pdid }} != header_unpack$pdid)) x_reason = {{ c.rej.pdid }};
        else if (((x_pt == {{ c.pt.mailbox_ack.h() }}) || (x_pt == {{ c.pt.mailbox_nack.h() }})) && !x_await) x_reason = {{ c.rej.stale }};
    end
    x_accept = (x_reason == 4'd0);
    // A fragment (trusted header): no transfer tracking either way (its
    // txid is a collective's number, golden `reject`); accepted, it is
    // written like a data packet's payload, its write posting nothing.
    x_frej = x_hok && (x_pt == {{ c.pt.allreduce_fragment.h() }});
    x_dw = x_data || (x_accept && x_frej);
    x_mb = (x_pt == {{ c.pt.mailbox.h() }});
    x_ack = (x_pt == {{ c.pt.mailbox_ack.h() }}) || (x_pt == {{ c.pt.mailbox_nack.h() }});
    x_last = footer_unpack$last;
    x_tkhit = (tk_h != {{ k.pd }}'d0);
    // Completion status: the mark is cleared first when first = 1.
    x_st = (x_data && !footer_unpack$first && x_tkhit) ? {{ c.cq.packet_rejected }} : (trk_lost ? {{ c.cq.untracked }} : {{ c.cq.ok }});
    // What the packet needs before it may be consumed (else Busy).
    x_rsp_rej = !x_accept && x_hok && x_fok && (x_reason != {{ c.rej.misrouted }}) && (x_reason != {{ c.rej.wrong_class }})
                && (x_mb || (x_pt == {{ c.pt.rdma_read_req.h() }}));
    x_need_cq = x_accept && ((x_data && x_last) || (x_pt == {{ c.pt.rdma_completion.h() }}) || (x_pt == {{ c.pt.nack.h() }}));
    // A read request finding the read queue full is answered
    // Nack(READ_BUSY = 12) instead of waiting (class 0 never waits for it).
    x_rdbusy = x_accept && (x_pt == {{ c.pt.rdma_read_req.h() }}) && rd_full;
    x_need_rq = x_rsp_rej || x_rdbusy || (x_accept && ((x_data && x_last && footer_unpack$notify) || x_mb));
    x_need_rd = x_accept && (x_pt == {{ c.pt.rdma_read_req.h() }}) && !rd_full;
    x_full = (x_need_cq && cq_full) || (x_need_rq && rq_full);
    // A message the mailbox takes is copied into its tail slot first.
    x_cp = (rx_st == 3'd2) && x_accept && x_mb && !mb_full && !mb_cp;
    // No decision while the scheduler picks or loads (their queue and slot
    // effects land first), nor while copying, nor in a cycle a landing write
    // posts (one push per queue and cycle), nor for a data packet while the
    // landing queue is full.
    x_try = (rx_st == 3'd2) && !pick_now && !eng_load && !reset && !x_cp && !lp_post{% if k.ar %} && !ar_hold && !ar_rxh{% endif %}
            && !(x_accept && x_dw && (lq_count == 4'd{{ lqd }}));
    x_commit = x_try && !x_full;
    x_busy = x_try && x_full;
    x_write = x_commit && x_accept && x_dw;
    // A data packet's completion and notify response are posted when its
    // write lands (B), not here: software must not see a completion before
    // the data. They wait in the landing queue (their room counted above).
    x_defer = x_write;
    // The response it causes, and the completion it posts.
    if (!x_accept) begin
        x_rq_pt = x_mb ? {{ c.pt.mailbox_nack.h() }} : {{ c.pt.nack.h() }};
        x_rq_fl = {4'd0, x_reason};
    end else if (x_mb) begin
        x_rq_pt = mb_full ? {{ c.pt.mailbox_nack.h() }} : {{ c.pt.mailbox_ack.h() }};
        x_rq_fl = {{ c.fl.ack }};
    end else if (x_rdbusy) begin
        x_rq_pt = {{ c.pt.nack.h() }};
        x_rq_fl = {{ c.fl.read_busy }};
    end else begin
        x_rq_pt = {{ c.pt.rdma_completion.h() }};
        x_rq_fl = { {{- stflpad }}x_st};
    end
    x_rq_ent = {x_rq_fl, footer_unpack$txid, header_unpack$pdid, footer_unpack$src, x_rq_pt};
    x_cq_kind = (x_pt == {{ c.pt.rdma_write.h() }}) ? {{ c.cq.write_in }} : ((x_pt == {{ c.pt.rdma_completion.h() }}) ? {{ c.cq.notify }} : {{ c.cq.read_done }});
    x_cq_st = (x_pt == {{ c.pt.rdma_completion.h() }}) ? footer_unpack$flags[{{ cqcm1 }}:0] : ((x_pt == {{ c.pt.nack.h() }}) ? {{ c.cq.remote_denied }} : x_st);
    x_cq_rs = (x_pt == {{ c.pt.nack.h() }}) ? footer_unpack$flags[3:0] : 4'd0;
    x_cq_ent = {header_unpack$pdid, footer_unpack$src, footer_unpack$txid, x_cq_rs, x_cq_st, x_cq_kind};
    // An acknowledgement of one of this node's messages.
    ak_fire = x_commit && x_accept && x_ack;
    ak_retry = (x_pt == {{ c.pt.mailbox_nack.h() }}) && ((footer_unpack$flags == {{ c.fl.full }}) || (footer_unpack$flags == {{ c.fl.payload_crc }}));
    ak_deny = (x_pt == {{ c.pt.mailbox_nack.h() }}) && !ak_retry;
end

// Completion, response and mailbox queues: pushes at the decision (a data
// packet's completion and notify response: from the landing queue at its
// B), pops by software (CQ_POP, MB_POP) and by the scheduler (responses).
reg        cq_wr;
reg        rq_wr;
reg        lp_cq;{% if k.ar %}
reg        lp_cqd;{% endif %}
reg        lp_rq;
reg        lq_push;
reg        lq_pop;
reg        cq_push;
reg        cq_pop;
reg        rq_push;
reg        rq_pop;
reg        mb_push;
reg        mb_pop;
reg        rd_push;
reg [{{ r.cq.width() - 1 }}:0] cq_rd;
reg [31:0] cq_w0;
reg [31:0] cq_w1;
reg [31:0] cq_w2;
reg [{{ r.rq.width() - 1 }}:0] rq_rd;
reg [{{ r.mb.width() - 1 }}:0] mb_hm;
reg  [8:0] mb_hlen;
reg [127:0] mb_rw;
reg [31:0] mb_rs;
reg  [8:0] mb_b0;
reg [31:0] mb_dw;
always @(*) begin
    cq_wr = x_commit && x_need_cq && !x_defer;
    rq_wr = x_commit && x_need_rq && !x_defer;
    lq_push = x_write || mw_push2;
    lq_pop = w_land;
    lp_cq = w_land && lq_rd{{ r.lq.at("cq_v") }};{% if k.ar %}
    // Straight into the CQ, unless held while an allreduce step waits
    // (`lh_push`, allreduce.v).
    lp_cqd = lp_cq && !lh_push;{% endif %}
    lp_rq = w_land && lq_rd{{ r.lq.at("rq_v") }};
    cq_push = cq_wr || lp_cq{% if k.ar %}d || ar_cq || lh_pop{% endif %};
    rq_push = rq_wr || lp_rq;
    mb_push = x_commit && x_accept && x_mb && !mb_full;
    cq_pop = wr_fire && a_cqpop && ((cq_count != {{ cqw }}'d0) || cq_push);
    mb_pop = wr_fire && a_mbpop && ((mb_count != {{ mbw }}'d0) || mb_push);
    rq_pop = rsp_go;
    rd_push = x_commit && x_need_rd;
    cq_rd = (cq_count == {{ cqw }}'d0) ? {{ r.cq.width() }}'d0 : cq_mem[cq_head];
    cq_w0 = { {{- cq_w[0] }}};
    cq_w1 = { {{- cq_w[1] }}};
    cq_w2 = { {{- cq_w[2] }}};
    rq_rd = rq_mem[rq_head];
    // MB_DATA[i] of the head message, i = s_araddr[7:2]; bytes past MB_LEN read 0.
    mb_hm = (mb_count == {{ mbw }}'d0) ? {{ r.mb.width() }}'d0 : mb_meta[mb_head];
    mb_hlen = mb_hm{{ r.mb.at("len") }};
    mb_rw = mb_mem[{mb_head, s_araddr[{{ mbwap3 }}:4]}];
    case (s_araddr[3:2])
        2'd0: mb_rs = mb_rw[31:0];
        2'd1: mb_rs = mb_rw[63:32];
        2'd2: mb_rs = mb_rw[95:64];
        default: mb_rs = mb_rw[127:96];
    endcase
    mb_b0 = {1'b0, s_araddr[7:2], 2'd0};
    mb_dw = mb_rs & {((mb_b0 + 9'd3) < mb_hlen) ? 8'hFF : 8'h00, ((mb_b0 + 9'd2) < mb_hlen) ? 8'hFF : 8'h00,
                           ((mb_b0 + 9'd1) < mb_hlen) ? 8'hFF : 8'h00, (mb_b0 < mb_hlen) ? 8'hFF : 8'h00};
end
always @(posedge clock) begin
    if (cq_wr) cq_mem[cq_tail] <= x_cq_ent;
    else if (lp_cq{% if k.ar %}d{% endif %}) cq_mem[cq_tail] <= lp_cq_ent;{% if k.ar %}
    else if (ar_cq) cq_mem[cq_tail] <= ar_ent;
    else if (lh_pop) cq_mem[cq_tail] <= lh_mem[lh_head];{% endif %}
    if (rq_wr) rq_mem[rq_tail] <= x_rq_ent;
    else if (lp_rq) rq_mem[rq_tail] <= lp_rq_ent;
    // (A second burst's B posts nothing.)
    if (lq_push) lq_mem[lq_tail] <= mw_push2 ? {{ r.lq.width() }}'d0 : {x_data, x_need_cq, x_cq_ent, x_need_rq, x_rq_ent};
    if (rd_push) rd_mem[rd_tail] <= {footer_unpack$notify, footer_unpack$txid, header_unpack$pdid, footer_unpack$src,
                                     x_p1{{ c.bits.rr_len }}, x_p1{{ c.bits.rr_land.low(r.rd.at("land").width) }}, header_unpack$vaddr};
    if (mb_push) mb_meta[mb_tail] <= {header_unpack$size[8:0], header_unpack$pdid, footer_unpack$src{% if k.tr %}, footer_unpack$txid{% endif %}};
end
always @(posedge clock) begin
    if (rx_st == 3'd7) mb_mem[{mb_tail, mb_k[{{ k.mbwam1 }}:0]}] <= rx_buf[rd_a];
end
always @(posedge clock) begin
    if (reset) begin
{{ q_reset }}
    end else begin
{{ q_update }}
    end
end

// The message being sent: from the send-queue pop (LOAD) to its tail flit
// on the output. At most one message is in flight, and its tail is the
// first one out after its pop.
always @(posedge clock) begin
    if (reset) ms_v <= 1'b0;
    else if (pq_pop) begin
        ms_v <= 1'b1;
        ms_idx <= {e_c, pq_slot};
    end else if (ov_q && ot_q && !ol_q) ms_v <= 1'b0;
end

// Sticky STATUS bits, the damaged-transfer table, mailbox counters. The
// golden order within a cycle: the decision, then a STATUS write (W1C).
reg tk_set;
always @(*) begin
    tk_set = x_commit && !x_accept && !x_frej && x_fok && !x_last && !x_tkhit && (tk_f1 != {{ k.pd }}'d0);
end
always @(posedge clock) begin
{%- for i in 0..k.pd %}
    if (tk_set && tk_f1[{{ i }}]) tk_key[{{ i }}] <= {footer_unpack$src, footer_unpack$txid};
{%- endfor %}
end
always @(posedge clock) begin
    if (reset) begin
        tk_v <= {{ k.pd }}'d0;
        trk_lost <= 1'b0;
        st_rxerr <= 1'b0;
        st_eqovf <= 1'b0;
        st_hdrc <= 1'b0;
        st_axierr <= 1'b0;
        wr_slverr <= 32'd0;
        wr_decerr <= 32'd0;
        mb_fulln <= 32'd0;
        mb_retry <= 32'd0;
        mb_denied <= 32'd0;
        rd_busyn <= 32'd0;
        rd_slverr <= 32'd0;
        rd_decerr <= 32'd0;
    end else begin
        if (x_commit) begin
            if (x_hok && header_unpack$single_err) st_hdrc <= 1'b1;
            if (!x_accept) begin
                st_rxerr <= 1'b1;
                if (eq_count == {{ eqw }}'d{{ eqd }}) st_eqovf <= 1'b1;
                if (x_frej) ;
                else if (!x_fok) trk_lost <= 1'b1;
                else if (!x_last) begin
                    if (tk_set) tk_v <= tk_v | tk_f1;
                    else if (!x_tkhit) trk_lost <= 1'b1;
                end else if (x_hok && x_data) tk_v <= tk_v & ~tk_h;
            end else if (x_data && (footer_unpack$first || x_last)) tk_v <= tk_v & ~tk_h;
            if (x_accept && x_mb && mb_full) mb_fulln <= mb_fulln + 32'd1;
            if (x_rdbusy) rd_busyn <= rd_busyn + 32'd1;
        end
        if (w_err) begin
            st_axierr <= 1'b1;
            if (m_bresp[0]) wr_decerr <= wr_decerr + 32'd1;
            else wr_slverr <= wr_slverr + 32'd1;
        end
        if (ak_fire && ak_retry) mb_retry <= mb_retry + 32'd1;
        if (ak_fire && ak_deny) mb_denied <= mb_denied + 32'd1;
        if (wr_fire && a_status) begin
            if (s_wdata{{ c.bits.st_rx_error }}) st_rxerr <= 1'b0;
            if (s_wdata{{ c.bits.st_errq_overflow }}) st_eqovf <= 1'b0;
            if (s_wdata{{ c.bits.st_track_lost }}) trk_lost <= 1'b0;
            if (s_wdata{{ c.bits.st_hdr_corrected }}) st_hdrc <= 1'b0;
            if (s_wdata{{ c.bits.st_axi_error }}) st_axierr <= 1'b0;
        end
        // A class-0 packet whose payload read had an error beat: its tail
        // is on the output (`rdma_tx`). After a STATUS write (the golden
        // order: write accepted, then packet left).
        if (ov_q && ot_q && !ol_q && (b_err != 2'd0)) begin
            st_axierr <= 1'b1;
            if (b_err[0]) rd_slverr <= rd_slverr + 32'd1;
            if (b_err[1]) rd_decerr <= rd_decerr + 32'd1;
        end
    end
end

// Error queue: push a rejected packet's trusted fields; ERRQ_POP pops
// after the push of the same cycle (the golden order: receive, then write).
reg        eq_push;
reg        eq_pop;
reg [{{ r.eq.width() - 1 }}:0] eq_ent;
reg [{{ r.eq.width() - 1 }}:0] eq_rd;
reg [31:0] eq_w0;
reg [31:0] eq_w1;
reg [31:0] eq_w2;
reg [31:0] eq_w3;
reg [31:0] eq_w4;
always @(*) begin
    eq_push = x_commit && !x_accept && (eq_count != {{ eqw }}'d{{ eqd }});
    eq_pop = wr_fire && a_eqpop && ((eq_count != {{ eqw }}'d0) || eq_push);
    eq_ent = {x_hok ? header_unpack$vaddr : 42'd0, x_hok ? header_unpack$size : 14'd0,
              x_hok ? header_unpack$pdid : 16'd0, x_fok ? footer_unpack$src : 22'd0,
              x_fok ? footer_unpack$txid : 14'd0, x_hok ? header_unpack$ptype : 5'd0,
              x_fok, x_hok, x_reason};
    eq_rd = (eq_count == {{ eqw }}'d0) ? {{ r.eq.width() }}'d0 : eq_mem[eq_head];
    eq_w0 = { {{- eq_w[0] }}};
    eq_w1 = { {{- eq_w[1] }}};
    eq_w2 = { {{- eq_w[2] }}};
    eq_w3 = {{ eq_w[3] }};
    eq_w4 = { {{- eq_w[4] }}};
end
always @(posedge clock) begin
    if (eq_push) eq_mem[eq_tail] <= eq_ent;
end
always @(posedge clock) begin
    if (reset) begin
{{ eq_reset }}
    end else begin
{{ eq_update }}
    end
end

// AXI4 write burst: realigned payload words, strobes for [off, off + size).
// `rd_a`: the ring word a W beat (or a mailbox copy) reads, payload word k
// of the packet being decided; `mw_pq` holds the previous one.
reg [{{ rxam1 }}:0] rd_a;
reg        cr1;
reg [255:0] mw_cat;
reg [255:0] mw_sh;
reg  [9:0] mw_lo16;
reg  [9:0] mw_hi16;
reg  [4:0] mw_lo;
reg  [4:0] mw_hi;
reg [16:0] mw_mhi;
reg [16:0] mw_mlo;
reg  [4:0] mw_kend;
reg        mw_mid;
reg        mw_push2;
always @(*) begin
    // The beats of the burst being sent, and whether a second one follows.
    mw_mid = mw_split && !mw_p2;
    mw_kend = mw_mid ? mw_b1 : mw_beats;
    rd_a = dq_sp + {{ rxa }}'d1 + ((rx_st == 3'd7) ? {{ mbkx }} : {{ mwkx }});
    mw_cat = {rx_buf[rd_a], mw_pq};
    mw_sh = mw_cat >> (9'd128 - {2'd0, mw_off, 3'd0});
    mw_lo16 = (mw_k == 5'd0) ? {6'd0, mw_off} : 10'd0;
    mw_hi16 = {6'd0, mw_off} + {1'b0, mw_size} - {1'b0, mw_k, 4'd0};
    mw_lo = mw_lo16[4:0];
    mw_hi = (mw_hi16 > 10'd16) ? 5'd16 : mw_hi16[4:0];
    mw_mhi = (17'd1 << mw_hi) - 17'd1;
    mw_mlo = (17'd1 << mw_lo) - 17'd1;
    // A second burst's B needs a landing-queue entry: its AW waits for room.
    m_awvalid = (rx_st == 3'd3) && !(mw_p2 && (lq_count == 4'd{{ lqd }}));
    m_awaddr = mw_p2 ? {mw_addr[41:12] + 30'd1, 12'd0} : {mw_addr[41:4], 4'd0};
    m_awlen = {3'd0, (mw_p2 ? mw_beats - mw_b1 : mw_kend) - 5'd1};
    mw_push2 = m_awvalid && m_awready && mw_p2;
    m_awsize = 3'd4;
    m_awburst = 2'd1;
    m_awuser = mw_pdid;
    m_wvalid = (rx_st == 3'd4);
    m_wdata = mw_sh[127:0];
    m_wstrb = mw_mhi[15:0] & ~mw_mlo[15:0];
    m_wlast = (mw_k == mw_kend - 5'd1);
    m_bready = (lq_count != 4'd0){% if k.ar %} && (!ar_hold || cb_drn || aq_wt){% endif %};{% if k.ar %}
    // The allreduce copy's bursts (no receive write is sent or owed a B then).
    if (cp_awv || cp_wv || cp_bw) begin
        m_awvalid = cp_awv;
        m_awaddr = cp_awaddr;
        m_awlen = cp_awlen;
        m_awuser = ar_pdid;
        m_wvalid = cp_wv;
        m_wdata = cp_wdata;
        m_wstrb = cp_wstrb;
        m_wlast = cp_wlast;
        m_bready = cp_bw;
    end{% endif %}
    // A credit per ring word freed, in order within its ring, on its flit's
    // VC; class 1 first.
    cr1 = (fr_p1 != dn_p1);
    credit_out_valid = cr1 || (fr_p != dn_p);
    credit_out_vc = cr1 ? r1_vcm[fr_p1] : rx_vcm[fr_p];
    rx_commit = x_commit;
    rx_busy = x_busy;
    rx_class = rx_cls;
end

// Receive side: the payload CRC-32 as the flits arrive (the byte count of
// the last payload word from the corrected header, `header_rx`), a packet
// record at each tail. Decision side: load the next record (its header,
// footer and first payload word) when idle or as the previous packet ends.
reg  [9:0] rv_pw;
reg  [4:0] rv_lastb;
reg  [8:0] x_wtmp;
reg [41:0] x_waddr;
reg  [8:0] x_wpage;
reg        x_split;
reg        ld_go;
reg        ld_yield;
reg        ld_c1;
reg        ld_park;
reg        in_c1;
reg        pm_push;
reg        pm_pop;
reg        pn_push;
reg        pn_pop;
reg [{{ rxam1 }}:0] ld_base;
reg [{{ rxam1 }}:0] ld_n;
reg [{{ r1am1 }}:0] ld_n1;
reg [{{ rxa }}:0] pm_n;
reg [{{ rxa }}:0] pn_n;
reg [{{ rxa }}:0] pm_nw;
always @(*) begin
    rv_pw = header_rx$size[13:4] + {9'd0, header_rx$size[3:0] != 4'd0};
    rv_lastb = (header_rx$size[3:0] == 4'd0) ? 5'd16 : {1'b0, header_rx$size[3:0]};
    // The write's address: a data packet's vaddr, a fragment's scratch place.
    x_waddr = {% if k.ar %}x_frej ? af_addr : {% endif %}header_unpack$vaddr;
    x_wtmp = {5'd0, x_waddr[3:0]} + header_unpack$size[8:0] + 9'd15;
    x_wpage = 9'd256 - {1'b0, x_waddr[11:4]};
    x_split = {4'd0, x_wtmp[8:4]} > x_wpage;
    pm_nw = rv_n + {{ rxa1 }}'d1;
    // The class of an arriving flit: its VC's (packets do not interleave).
    in_c1 = (in_vc >= 4'd{{ k.vpc }});
    pm_push = in_valid && in_tail && !in_c1;
    pn_push = in_valid && in_tail && in_c1;
    pm_n = pm_mem[pm_head][{{ rxa32 }}:32];
    pn_n = pn_mem[pn_head][{{ rxa32 }}:32];
    // The next decision: a class-1 packet first; else the class-0 packet
    // that yielded (reloaded from its words), else the next class-0 one. A
    // class-0 packet found Busy yields to a waiting class-1 packet.
    ld_c1 = (pn_count != {{ pnw }}'d0);
    ld_park = !ld_c1 && c0_park;
    ld_base = ld_park ? dq_sp : dq_nx;
    ld_n = (ld_park ? pk_n[{{ rxam1 }}:0] : pm_n[{{ rxam1 }}:0]) - {{ rxa }}'d1;
    ld_n1 = pn_n[{{ r1am1 }}:0] - {{ r1a }}'d1;
    ld_yield = (rx_st == 3'd2) && x_busy && !rx_cls && ld_c1;
    ld_go = (ld_c1 || c0_park || (pm_count != {{ pmw }}'d0)) && !reset
            && ((rx_st == 3'd0) || ((rx_st == 3'd2) && x_commit && !x_write) || ld_yield
                || ((rx_st == 3'd4) && m_wready && m_wlast && !mw_mid));
    pm_pop = ld_go && !ld_c1 && !c0_park;
    pn_pop = ld_go && ld_c1;
end

always @(posedge clock) begin
    if (in_valid && !in_c1) begin
        rx_buf[in_wp] <= in_data;
        rx_vcm[in_wp] <= in_vc;
    end
    if (in_valid && in_c1) begin
        r1_buf[in_wp1] <= in_data;
        r1_vcm[in_wp1] <= in_vc;
    end
    if (pm_push) pm_mem[pm_tail] <= {pm_nw, crc_rx$crc};
    if (pn_push) pn_mem[pn_tail] <= {pm_nw, crc_rx$crc};
end

always @(posedge clock) begin
    if (reset) begin
        rx_st <= 3'd0;
        in_wp <= {{ rxa }}'d0;
        in_wp1 <= {{ r1a }}'d0;
        rv_n <= {{ rxa1 }}'d0;
        dq_sp <= {{ rxa }}'d0;
        dq_nx <= {{ rxa }}'d0;
        dn_p <= {{ rxa }}'d0;
        fr_p <= {{ rxa }}'d0;
        dq_sp1 <= {{ r1a }}'d0;
        dq_nx1 <= {{ r1a }}'d0;
        dn_p1 <= {{ r1a }}'d0;
        fr_p1 <= {{ r1a }}'d0;
        rx_cls <= 1'b0;
        c0_park <= 1'b0;
        rc_start <= 1'b0;
        rc_valid <= 1'b0;
        mb_cp <= 1'b0;
        lq_cqh <= 5'd0;
        lq_rqh <= 5'd0;
        rx_packets <= 32'd0;
        rx_rejected <= 32'd0;
        rx_hdrc <= 32'd0;
        rx_bytes <= 32'd0;
{{ pm_reset }}
{{ pn_reset }}
{{ lq_reset }}
{%- for i in 0..rejn %}
        rej_cnt[{{ i }}] <= 32'd0;
{%- endfor %}
    end else begin
{{ pm_update }}
{{ pn_update }}
{{ lq_update }}
        // Receive: every flit into the ring; the packet's first word (its
        // head) restarts the CRC, its payload words feed it.
        rc_start <= in_valid && (rv_n == {{ rxa1 }}'d0);
        rc_valid <= in_valid && (rv_n != {{ rxa1 }}'d0) && !in_tail;
        rc_data <= in_data;
        rc_bytes <= ({ {{- rvpad }}rv_n} == rv_pw) ? rv_lastb : 5'd16;
        if (in_valid) begin
            if (in_c1) in_wp1 <= in_wp1 + {{ r1a }}'d1;
            else in_wp <= in_wp + {{ rxa }}'d1;
            rv_n <= in_tail ? {{ rxa1 }}'d0 : rv_n + {{ rxa1 }}'d1;
            if (rv_n == {{ rxa1 }}'d0) hin_q <= in_data;
        end
        if (cr1) fr_p1 <= fr_p1 + {{ r1a }}'d1;
        else if (credit_out_valid) fr_p <= fr_p + {{ rxa }}'d1;
        lq_cqh <= lq_cqh + {4'd0, lq_push && x_need_cq} - {4'd0, lp_cq};
        lq_rqh <= lq_rqh + {4'd0, lq_push && x_need_rq} - {4'd0, lp_rq};
        if (ld_yield) begin
            c0_park <= 1'b1;
            pk_n <= rx_n;
            pk_crc <= rx_crc;
        end
        if (ld_go) begin
            rx_cls <= ld_c1;
            mb_cp <= 1'b0;
            if (ld_c1) begin
                hdr_q <= r1_buf[dq_nx1];
                ftr_q <= r1_buf[dq_nx1 + ld_n1];
                p1_q <= r1_buf[dq_nx1 + {{ r1a }}'d1];
                rx_n <= pn_n;
                rx_crc <= pn_mem[pn_head][31:0];
                dq_sp1 <= dq_nx1;
                dq_nx1 <= dq_nx1 + pn_n[{{ r1am1 }}:0];
            end else begin
                hdr_q <= rx_buf[ld_base];
                ftr_q <= rx_buf[ld_base + ld_n];
                p1_q <= rx_buf[ld_base + {{ rxa }}'d1];
                if (ld_park) begin
                    c0_park <= 1'b0;
                    rx_n <= pk_n;
                    rx_crc <= pk_crc;
                end else begin
                    rx_n <= pm_n;
                    rx_crc <= pm_mem[pm_head][31:0];
                    dq_sp <= dq_nx;
                    dq_nx <= dq_nx + pm_n[{{ rxam1 }}:0];
                end
            end
        end
        case (rx_st)
            3'd0: if (ld_go) rx_st <= 3'd2;
            3'd2: if (x_cp) begin
                rx_st <= 3'd7;
                mb_k <= 5'd0;
            end else if (x_commit) begin
                rx_packets <= rx_packets + 32'd1;
                if (x_hok && header_unpack$single_err) rx_hdrc <= rx_hdrc + 32'd1;
                if (!x_accept) begin
                    rx_rejected <= rx_rejected + 32'd1;
                    rej_cnt[x_reason] <= rej_cnt[x_reason] + 32'd1;
                end
                if (x_write) begin
                    if (x_data) rx_bytes <= rx_bytes + {18'd0, header_unpack$size};
                    rx_st <= 3'd3;
                    mw_addr <= x_waddr;
                    mw_off <= x_waddr[3:0];
                    mw_split <= x_split;
                    mw_b1 <= x_wpage[4:0];
                    mw_p2 <= 1'b0;
                    mw_size <= header_unpack$size[8:0];
                    mw_beats <= x_wtmp[8:4];
                    mw_pdid <= header_unpack$pdid;
                    mw_k <= 5'd0;
                end else begin
                    // Its words are free: credits from the next cycle.
                    if (rx_cls) dn_p1 <= dq_sp1 + rx_n[{{ r1am1 }}:0];
                    else dn_p <= dq_sp + rx_n[{{ rxam1 }}:0];
                    if (!ld_go) rx_st <= 3'd0;
                end
            end
            3'd3: if (m_awready) rx_st <= 3'd4;
            3'd4: if (m_wready) begin
                mw_k <= mw_k + 5'd1;
                mw_pq <= rx_buf[rd_a];
                if (m_wlast && mw_mid) begin
                    mw_p2 <= 1'b1;
                    rx_st <= 3'd3;
                end else if (m_wlast) begin
                    dn_p <= dq_sp + rx_n[{{ rxam1 }}:0];
                    rx_st <= ld_go ? 3'd2 : 3'd0;
                end
            end
            3'd7: begin
                // Copy payload words 1..MB16 into the mailbox tail slot.
                mb_k <= mb_k + 5'd1;
                if (mb_k == 5'd{{ k.mb16m1 }}) begin
                    mb_cp <= 1'b1;
                    rx_st <= 3'd2;
                end
            end
            default: rx_st <= 3'd0;
        endcase
    end
end
// Fields this increment does not use (responses, mailbox, ERRQ come next).
wire unused_rx = &{1'b0, x_wtmp[3:0], x_wpage[8:5], x_fe, mw_lo16[9:5], mw_hi16[9:5], mw_mhi[16], mw_mlo[16], mw_addr[3:0],
                   header_unpack$fpga_offset, header_unpack$path, header_unpack$reserved, header_unpack$vc,
                   header_unpack$ecc_reserved, footer_unpack$crc8, footer_unpack$user, footer_unpack$ttl,
                   x_end[43:42], mw_sh[255:128], footer_unpack$flags[7:4], k_t[13:{{ k.sa }}],
                   // Packets are framed by their tails (a packet is the words
                   // after the previous tail), so the head flag is redundant;
                   // the receive-side header decode serves the CRC byte count.
                   in_head, header_rx$fpga_offset, header_rx$path, header_rx$reserved, header_rx$vc,
                   header_rx$ecc_reserved, header_rx$vaddr, header_rx$ptype, header_rx$dest, header_rx$pdid,
                   header_rx$single_err, header_rx$double_err, header_rx$ptype_known{% if !k.tr %},
                   // The data mark serves only the event trace.
                   lq_rd{{ r.lq.at("data") }}{% endif %}};

