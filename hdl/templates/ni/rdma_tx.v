{# rdma_tx: scheduler, segmentation, read-ahead, payload datapath, flit output (see ni/rdma_tx.rs). `{ {{- x }}` opens a concatenation with a generated value. #}
// ===================== rdma_tx =====================
// Scheduler: LOAD in the cycle after a pick; the record is appended to the
// packet queue in the cycle after LOAD.
reg        f_load;
reg        f_push;
reg [{{ k.cwm1 }}:0] rr;
reg        e_msg;
reg        e_rd;
{%- if k.ar %}
reg        e_ar;
{%- endif %}
reg [31:0] tx_packets;
reg [31:0] tx_bytes;
reg        act [0:{{ k.ncm1 }}];
reg [{{ k.abm1 }}:0] cur_src [0:{{ k.ncm1 }}];
reg [41:0] cur_land [0:{{ k.ncm1 }}];
reg [31:0] cur_rem [0:{{ k.ncm1 }}];
reg [13:0] cur_seq [0:{{ k.ncm1 }}];
// Read-serve engine: the head request's transfer state.
reg        rs_act;
reg [{{ k.abm1 }}:0] rs_src;
reg [41:0] rs_land;
reg [31:0] rs_rem;
reg [13:0] rs_seq;
// Response lane: the footer goes next (`rl_ftr`); resp_vc credits used.
reg        rl_st;
reg [127:0] rl_ftr;
reg [{{ k.crwm1 }}:0] rcr_used;
reg        ol_q;
// Sender: 0 header next, 1 payload, 2 footer.
reg  [1:0] b_st;
reg  [4:0] jp;
reg  [4:0] js;
reg        word_v;
reg [127:0] word_q;
reg [31:0] crc_q;
reg [{{ k.crwm1 }}:0] cr_used;
reg        ov_q;
reg        oh_q;
reg        ot_q;
reg [127:0] od_q;
// Realigner: words pushed and beats taken for the head read job.
reg  [4:0] rjp;
reg  [4:0] rb;
reg [127:0] prev;
// AXI4 read errors: per beat {DECERR, SLVERR}, carried with each payload
// word (`pf_emem`, `word_e`) and gathered per packet (`b_err`).
reg  [1:0] prev_e;
reg  [1:0] word_e;
reg  [1:0] b_err;
(* ram_style = "distributed" *)
reg  [1:0] pf_emem [0:{{ pfd - 1 }}];

// Pick: round-robin over channels with work.
reg [{{ cm1 }}:0] rdy;
reg hi_v;
reg lo_v;
reg [{{ k.cwm1 }}:0] hi_c;
reg [{{ k.cwm1 }}:0] lo_c;
reg pick_now;
reg pick_rd;
{%- if k.ar %}
reg pick_ar;
{%- endif %}
reg [{{ k.cwm1 }}:0] pick_c;
reg cand_msg;
reg mq_room;
reg be_empty;
reg can_pick;
reg eng_load;
{%- if k.ar %}
// Payload FIFO words owed: those of every data packet loaded and not yet
// taken by the sender (in the FIFO, or still to be read); and whether a
// pick must find room for a largest packet besides (a collective runs).
reg [11:0] pf_res;
reg        ar_rsv;
reg        pf_take;
{%- endif %}
{{ queue_decls }}
// The packet record: e_* as loaded, b_* the sender's head.
{{ e_decl }}
{{ b_decl }}
reg [{{ rec_w - 1 }}:0] e_rec;
reg [{{ rec_w - 1 }}:0] b_rec;
{{ mq_mem }}
always @(*) begin
    e_rec = { {{- e_concat }}};
    b_rec = (mq_count != {{ mqw }}'d0) ? mq_mem[mq_head] : e_rec;
{{ b_unpack }}
end
always @(*) begin
{%- for ch in 0..k.c %}
    rdy[{{ ch }}] = (pq_count[{{ k.cw }}'d{{ ch }}] != {{ k.sa + 1 }}'d0) || (dq_count[{{ k.cw }}'d{{ ch }}] != {{ k.dqa + 1 }}'d0);
{%- endfor %}
    hi_v = 1'b0;
    lo_v = 1'b0;
    hi_c = {{ k.cw }}'d0;
    lo_c = {{ k.cw }}'d0;
{#- The first ready channel at or after the pointer (hi), else the first ready one (lo): scanned from the top so the lowest wins. #}
{%- for ch in (0..k.c).rev() %}
    if (rdy[{{ ch }}] && {% if ch == 0 %}(rr == {{ k.cw }}'d{{ ch }}){% else if ch == k.nc - 1 %}1'b1{% else %}(rr <= {{ k.cw }}'d{{ ch }}){% endif %}) begin hi_v = 1'b1; hi_c = {{ k.cw }}'d{{ ch }}; end
{%- endfor %}
{%- for ch in (0..k.c).rev() %}
    if (rdy[{{ ch }}]) begin lo_v = 1'b1; lo_c = {{ k.cw }}'d{{ ch }}; end
{%- endfor %}
    pick_rd = (rd_count != {{ rdw }}'d0);
{%- if k.ar %}
    // The allreduce engine's next fragment, before the channels (golden
    // `emit_request`).
    pick_ar = !pick_rd && tx_en && ar_frag;
{%- endif %}
    pick_c = hi_v ? hi_c : lo_c;
    // A channel pick would take a message (sent from its slot as it leaves).
    cand_msg = !pick_rd{% if k.ar %} && !pick_ar{% endif %} && (pq_count[pick_c] != {{ k.sw }}'d0);
    mq_room = ({1'b0, mq_count} + { {{- mqw }}'d0, f_push}) < {{ mqw1 }}'d{{ mqd }};
    be_empty = (mq_count == {{ mqw }}'d0) && !f_push;
    can_pick = !f_load && !ar_v && mq_room && (be_empty || !cand_msg){% if k.ar %}
               // The allreduce engine: no pick while a DOORBELL is pending
               // (it waits for the AXI4 master to drain), nor while it
               // checks or copies.
               && !ar_dbp && !ar_hold
               // While a collective runs, a pick needs payload FIFO room
               // for a largest packet besides every word already owed to
               // it (`pf_res`): the reads of every picked packet then
               // drain through memory alone, so a ready step's wait for a
               // quiet AXI4 master never waits for network credits.
               && (!ar_rsv || ({1'b0, pf_res} + 13'd{{ k.p / 16 }} <= 13'd{{ pfd }})){% endif %};
    pick_now = can_pick && (pick_rd{% if k.ar %} || pick_ar{% endif %} || (tx_en && lo_v)) && !reset;
    eng_load = f_load;
end

// Load: the picked channel's next packet.
reg [{{ r.dq.width() - 1 }}:0] dq_rd;
reg [41:0] d_laddr;
reg [41:0] d_raddr;
reg [31:0] d_len;
reg [21:0] d_dest;
reg        d_op;
reg        d_notify;
reg [13:0] d_txid;
reg [15:0] d_pdid;
reg [{{ r.rd.width() - 1 }}:0] rd_e;
reg        l_act;
reg [{{ k.abm1 }}:0] l_src;
reg [41:0] l_land;
reg [31:0] l_rem;
reg [13:0] l_seq;
reg  [8:0] l_room;
reg  [8:0] l_n;
reg        l_last;
reg  [8:0] l_btmp;
reg  [4:0] l_beats;
reg  [8:0] l_topage;
reg        l_split;
reg  [8:0] l_size;
reg  [8:0] l_wtmp;
reg        l_data;
reg        dq_pop;
reg        rd_pop;
reg        pq_pop;
always @(*) begin
    dq_rd = dq_mem[{e_c, dq_head[e_c]}];
    d_laddr = dq_rd{{ r.dq.at("laddr") }};
    d_raddr = dq_rd{{ r.dq.at("raddr") }};
    d_len = dq_rd{{ r.dq.at("len") }};
    d_dest = dq_rd{{ r.dq.at("dest") }};
    d_op = dq_rd{{ r.dq.at("op") }};
    d_notify = dq_rd{{ r.dq.at("notify") }};
    d_txid = dq_rd{{ r.dq.at("txid") }};
    d_pdid = dq_rd{{ r.dq.at("pdid") }};
    rd_e = rd_mem[rd_head];
    // A read response streams like a write, from the read queue's head.
    if (e_rd) begin
        l_act = rs_act;
        l_src = rs_act ? rs_src : rd_e{{ r.rd.at("src").low(k.ab) }};
        l_land = rs_act ? rs_land : rd_e{{ r.rd.at("land") }};
        l_rem = rs_act ? rs_rem : rd_e{{ r.rd.at("len") }};
        l_seq = rs_act ? rs_seq : 14'd0;
    end else begin
        l_act = act[e_c];
        l_src = l_act ? cur_src[e_c] : d_laddr[{{ k.abm1 }}:0];
        l_land = l_act ? cur_land[e_c] : d_raddr;
        l_rem = l_act ? cur_rem[e_c] : d_len;
        l_seq = l_act ? cur_seq[e_c] : 14'd0;
    end
{%- if k.ar %}
    // An allreduce fragment: the next P bytes of its step's send range.
    if (e_ar) begin
        l_act = 1'b0;
        l_src = fr_src[{{ k.abm1 }}:0];
        l_land = fr_vaddr;
        l_rem = fr_rem;
        l_seq = fr_j;
    end
{%- endif %}
    l_room = 9'd{{ k.p }} - { {{- roompad }}l_land[{{ k.pam1 }}:0]};
    l_n = (l_rem < {23'd0, l_room}) ? l_rem[8:0] : l_room;
{%- if k.ar %}
    // A fragment is cut every P bytes of the send range, not at P
    // boundaries of its landing address.
    if (e_ar) l_n = (l_rem < 32'd{{ k.p }}) ? l_rem[8:0] : 9'd{{ k.p }};
{%- endif %}
    l_last = (l_rem == {23'd0, l_n});
    l_btmp = {5'd0, l_src[3:0]} + l_n + 9'd15;
    l_beats = l_btmp[8:4];
    l_topage = 9'd256 - {1'b0, l_src[11:4]};
    l_split = ({4'd0, l_beats} > l_topage);
    l_size = e_msg ? ps_len[{e_c, pq_slot}] : ((d_op && !e_rd{% if k.ar %} && !e_ar{% endif %}) ? {{ c.size.read_req }} : l_n);
    l_wtmp = l_size + 9'd15;
    // A packet whose payload is read from memory (write, read response).
    l_data = !e_msg && (e_rd || !d_op{% if k.ar %} || e_ar{% endif %});
    dq_pop = eng_load && !e_msg && !e_rd{% if k.ar %} && !e_ar{% endif %} && (d_op || l_last);
    rd_pop = eng_load && e_rd && l_last;
    pq_pop = eng_load && e_msg;
    rj_push = eng_load && l_data;
end
reg [13:0] msg_base;
always @(*) begin
    case (e_c)
{%- for ch in 0..k.c %}
        {{ k.cw }}'d{{ ch }}: msg_base = 14'd{{ ch * k.s }};
{%- endfor %}
        default: msg_base = 14'd0;
    endcase
end

// Sender: flit sends and credits over the packet queue's head.
reg        head_v;
reg  [8:0] b_wtmp;
reg  [4:0] b_words;
reg  [4:0] b_lastb;
reg credit_ok;
reg hdr_send;
reg pay_send;
reg ftr_send;
reg send_now;
reg cr_ret;
reg rsp_go;
reg rl_send;
reg rcr_ret;
always @(*) begin
    head_v = (mq_count != {{ mqw }}'d0) || f_push;
    b_wtmp = b_size + 9'd15;
    b_words = b_wtmp[8:4];
    b_lastb = (b_size[3:0] == 4'd0) ? 5'd16 : {1'b0, b_size[3:0]};
    credit_ok = (cr_used != {{ k.crw }}'d{{ k.buf }});
    // Response lane (class 1, `resp_vc`): the response queue's head, two
    // flits in consecutive cycles, started with both credits in hand. Its
    // flits go first, between any two class-0 flits (the link carries the
    // VCs interleaved; each VC's packets stay whole): a class-0 packet
    // stalled mid-way for credits of its VC never holds a response back.
    rsp_go = !rl_st && (rq_count != {{ rqw }}'d0) && (rcr_used <= {{ k.crw }}'d{{ bufm2 }}) && !reset;
    rl_send = rsp_go || rl_st;
    rcr_ret = credit_in_valid && (credit_in_vc == 4'd{{ k.rvc }}) && ((rcr_used != {{ k.crw }}'d0) || rl_send);
    hdr_send = (b_st == 2'd0) && head_v && credit_ok && !rl_send;
    pay_send = (b_st == 2'd1) && word_v && credit_ok && !rl_send;
    ftr_send = (b_st == 2'd2) && credit_ok && !rl_send;
    send_now = hdr_send || pay_send || ftr_send;
    cr_ret = credit_in_valid && (credit_in_vc == 4'd{{ k.vc }}) && ((cr_used != {{ k.crw }}'d0) || send_now);
    mq_push = f_push;
    mq_pop = ftr_send;
end

// Realigner: AXI4 R beats of the head read job into the payload FIFO.
reg [13:0] rj_rd;
reg  [3:0] e_shift;
reg  [4:0] e_beats;
reg  [4:0] r_words;
reg        r_on;
reg        pf_room;
reg        r_take;
reg        r_done;
reg        r_push;
reg [127:0] pf_word;
reg  [1:0] pf_e;
reg  [1:0] r_e;
reg [127:0] r_data;
reg  [6:0] sh;
always @(*) begin
    // A beat answered SLVERR / DECERR (RRESP[1]) carries no data: its
    // bytes are read as zero, and its kind goes with the words it makes.
    r_e = m_rresp[1] ? {m_rresp[0], !m_rresp[0]} : 2'd0;
    r_data = m_rresp[1] ? 128'd0 : m_rdata;
    rj_rd = rj_mem[rj_head];
    e_shift = rj_rd[13:10];
    e_beats = rj_rd[9:5];
    r_words = rj_rd[4:0];
    r_on = (rj_count != {{ mqw }}'d0);
    pf_room = (pf_count != {{ pfw }}'d{{ pfd }});
    sh = {e_shift, 3'd0};
    m_rready = 1'b0;
    r_take = 1'b0;
    r_push = 1'b0;
    pf_word = r_data;
    pf_e = r_e;
    if (e_shift == 4'd0) begin
        m_rready = r_on && pf_room;
        r_take = m_rready && m_rvalid;
        r_push = r_take;
    end else if (rb == 5'd0) begin
        // Priming beat of an unaligned source.
        m_rready = r_on;
        r_take = m_rready && m_rvalid;
    end else if (rb != e_beats) begin
        m_rready = r_on && pf_room;
        r_take = m_rready && m_rvalid;
        r_push = r_take;
        pf_word = (prev >> sh) | (r_data << (8'd128 - {1'b0, sh}));
        pf_e = prev_e | r_e;
    end else begin
        r_push = r_on && pf_room;
        pf_word = prev >> sh;
        pf_e = prev_e;
    end
{%- if k.ar %}
    // The allreduce copy's R beats (no transmit read is outstanding then).
    if (cp_rd) m_rready = 1'b1;
{%- endif %}
    r_done = r_push && (rjp == r_words - 5'd1);
    rj_pop = r_done;
end

// Payload words into word_q: message slot, read request, or payload FIFO.
reg        prod_on;
reg        prod_room;
reg        prod_fire;
reg [127:0] prod_word;
reg  [1:0] prod_e;
reg [127:0] prod_mask;
reg  [4:0] vb;
reg        pf_empty;
always @(*) begin
    prod_on = (((b_st == 2'd0) && head_v) || (b_st == 2'd1)) && (jp != b_words);
    prod_room = !word_v || pay_send;
    pf_pop = 1'b0;
    pf_empty = (pf_count == {{ pfw }}'d0);
    prod_e = 2'd0;
    case (b_kind)
        2'd2: begin
            prod_fire = prod_on && prod_room;
            prod_word = msg_word;
        end
        2'd1: begin
            prod_fire = prod_on && prod_room;
            prod_word = { {{- rr_word }}};
        end
        default: begin
            // From the FIFO; when it is empty, the realigner's word of this
            // cycle (the head packet's: the FIFO holds no earlier word).
            prod_fire = prod_on && prod_room && (pf_empty ? r_push : 1'b1);
            prod_word = pf_empty ? pf_word : pf_mem[pf_head];
            prod_e = pf_empty ? pf_e : pf_emem[pf_head];
            pf_pop = prod_fire && !pf_empty;
        end
    endcase
    pf_push = r_push && !(prod_fire && pf_empty && (b_kind == 2'd0));
{%- if k.ar %}
    pf_take = pf_pop || (prod_fire && pf_empty && (b_kind == 2'd0));
    ar_rsv = rn_st != 2'd0;
{%- endif %}
    vb = (jp == b_words - 5'd1) ? b_lastb : 5'd16;
    prod_mask = {128{1'b1}} >> {5'd16 - vb, 3'd0};
end

// Children: header (SECDED), footer (CRC-8), payload CRC-32.
always @(*) begin
    header_pack$fpga_offset = 2'd0;
    header_pack$path = 3'd0;
    header_pack$reserved = 3'd0;
    header_pack$vaddr = b_vaddr;
    header_pack$size = {5'd0, b_size};
    header_pack$ptype = b_ptype;
    header_pack$dest = b_dest;
    header_pack$pdid = b_pdid;
    header_pack$vc = 5'd0;
    footer_pack$payload_crc = crc_q;
    footer_pack$user = {% if k.ar %}b_user{% else %}12'd0{% endif %};
    footer_pack$ttl = 15'd0;
    footer_pack$seq = b_seq;
    footer_pack$notify = b_notify;
    footer_pack$last = b_last;
    footer_pack$first = b_first;
{%- if k.ar %}
    // Class-0 packets carry no flags (responses leave by the lane), but
    // an allreduce fragment its step index.
{%- else %}
    // Class-0 packets carry no flags (responses leave by the lane).
{%- endif %}
    footer_pack$flags = {% if k.ar %}b_flags{% else %}8'd0{% endif %};
    footer_pack$src = node;
    footer_pack$txid = b_txid;
    crc32$clock = clock;
    crc32$reset = reset;
    crc32$start = hdr_send;
    crc32$valid = pay_send;
    crc32$data = word_q;
    crc32$bytes = (js == b_words - 5'd1) ? b_lastb : 5'd16;
end

// The response lane's header and footer, from the response queue's head
// {flags, txid, pdid, dest, ptype}: no payload, first = last = 1.
always @(*) begin
    rsp_hdr$fpga_offset = 2'd0;
    rsp_hdr$path = 3'd0;
    rsp_hdr$reserved = 3'd0;
    rsp_hdr$vaddr = 42'd0;
    rsp_hdr$size = 14'd0;
    rsp_hdr$ptype = rq_rd{{ r.rq.at("ptype") }};
    rsp_hdr$dest = rq_rd{{ r.rq.at("dest") }};
    rsp_hdr$pdid = rq_rd{{ r.rq.at("pdid") }};
    rsp_hdr$vc = 5'd0;
    rsp_ftr$payload_crc = 32'd0;
    rsp_ftr$user = 12'd0;
    rsp_ftr$ttl = 15'd0;
    rsp_ftr$seq = 14'd0;
    rsp_ftr$notify = 1'b0;
    rsp_ftr$last = 1'b1;
    rsp_ftr$first = 1'b1;
    rsp_ftr$flags = rq_rd{{ r.rq.at("flags") }};
    rsp_ftr$src = node;
    rsp_ftr$txid = rq_rd{{ r.rq.at("txid") }};
end

always @(*) begin
    out_valid = ov_q;
    out_data = od_q;
    out_head = oh_q;
    out_tail = ot_q;
    out_vc = ol_q ? 4'd{{ k.rvc }} : 4'd{{ k.vc }};
    rsp_pick = rsp_go;
    tx_pick = pick_now;
    tx_busy = !can_pick;
end

always @(posedge clock) begin
    if (reset) begin
        f_load <= 1'b0;
        f_push <= 1'b0;
        rr <= {{ k.cw }}'d0;
        e_c <= {{ k.cw }}'d0;
        e_msg <= 1'b0;
        e_rd <= 1'b0;
{%- if k.ar %}
        e_ar <= 1'b0;
{%- endif %}
        rs_act <= 1'b0;
{%- if k.ar %}
        pf_res <= 12'd0;
{%- endif %}
        tx_packets <= 32'd0;
        tx_bytes <= 32'd0;
{%- for ch in 0..k.nc %}
        act[{{ k.cw }}'d{{ ch }}] <= 1'b0;
{%- endfor %}
    end else begin
        f_load <= pick_now;
        f_push <= f_load;
{%- if k.ar %}
        pf_res <= pf_res + (rj_push ? {7'd0, l_wtmp[8:4]} : 12'd0) - (pf_take ? 12'd1 : 12'd0);
{%- endif %}
        if (pick_now) begin
            e_rd <= pick_rd;
{%- if k.ar %}
            e_ar <= pick_ar;
{%- endif %}
            if (pick_rd{% if k.ar %} || pick_ar{% endif %}) e_msg <= 1'b0;
            else begin
                e_c <= pick_c;
                e_msg <= (pq_count[pick_c] != {{ k.sw }}'d0);
                rr <= (pick_c == {{ k.cw }}'d{{ cm1 }}) ? {{ k.cw }}'d0 : pick_c + {{ k.cw }}'d1;
            end
        end
        // TX_PACKETS counts every packet at its pick (the lane's included).
        tx_packets <= tx_packets + {31'd0, f_load} + {31'd0, rsp_go};
        if (f_load) begin
            e_size <= l_size;
            tx_bytes <= tx_bytes + {23'd0, l_size};
{%- if k.ar %}
            e_flags <= {{ r_flagsw }}'d0;
            e_user <= {{ r_userw }}'d0;
{%- endif %}
            if (e_msg) begin
                e_kind <= 2'd2;
                e_ptype <= {{ c.pt.mailbox }};
                e_vaddr <= 42'd0;
                e_dest <= ps_dest[{e_c, pq_slot}];
                e_pdid <= ps_pdid[{e_c, pq_slot}];
                e_seq <= 14'd0;
                e_first <= 1'b1;
                e_last <= 1'b1;
                e_notify <= 1'b0;
                e_txid <= msg_base + { {{- txid_pad }}pq_slot};
                e_slot <= pq_slot;
{%- if k.ar %}
            end else if (e_ar) begin
                e_kind <= 2'd0;
                e_ptype <= {{ c.pt.allreduce_fragment }};
                e_vaddr <= l_land;
                e_dest <= fr_dest;
                e_pdid <= fr_pdid;
                e_seq <= l_seq;
                e_first <= l_seq == 14'd0;
                e_last <= l_last;
                e_notify <= 1'b0;
                e_txid <= fr_seq;
                e_flags <= fr_index;
                e_user <= fr_user;
{%- endif %}
            end else if (d_op && !e_rd) begin
                e_kind <= 2'd1;
                e_ptype <= {{ c.pt.rdma_read_req }};
                e_vaddr <= d_raddr;
                e_dest <= d_dest;
                e_pdid <= d_pdid;
                e_seq <= 14'd0;
                e_first <= 1'b1;
                e_last <= 1'b1;
                e_notify <= d_notify;
                e_txid <= d_txid;
                e_rrlen <= d_len;
                e_rrladdr <= d_laddr;
            end else begin
                e_kind <= 2'd0;
                e_ptype <= e_rd ? {{ c.pt.rdma_read_resp.h() }} : {{ c.pt.rdma_write.h() }};
                e_vaddr <= l_land;
                e_dest <= e_rd ? rd_e{{ r.rd.at("requester") }} : d_dest;
                e_pdid <= e_rd ? rd_e{{ r.rd.at("pdid") }} : d_pdid;
                e_seq <= l_seq;
                e_first <= !l_act;
                e_last <= l_last;
                e_notify <= e_rd ? rd_e{{ r.rd.at("notify") }} : d_notify;
                e_txid <= e_rd ? rd_e{{ r.rd.at("txid") }} : d_txid;
                if (e_rd) begin
                    rs_act <= !l_last;
                    rs_src <= l_src + { {{- src_pad }}l_n};
                    rs_land <= l_land + {33'd0, l_n};
                    rs_rem <= l_rem - {23'd0, l_n};
                    rs_seq <= l_seq + 14'd1;
                end else if (l_last) act[e_c] <= 1'b0;
                else begin
                    act[e_c] <= 1'b1;
                    cur_src[e_c] <= l_src + { {{- src_pad }}l_n};
                    cur_land[e_c] <= l_land + {33'd0, l_n};
                    cur_rem[e_c] <= l_rem - {23'd0, l_n};
                    cur_seq[e_c] <= l_seq + 14'd1;
                end
            end
        end
    end
end

always @(posedge clock) begin
    if (reset) begin
        b_st <= 2'd0;
        jp <= 5'd0;
        js <= 5'd0;
        word_v <= 1'b0;
        cr_used <= {{ k.crw }}'d0;
        ov_q <= 1'b0;
        oh_q <= 1'b0;
        ot_q <= 1'b0;
        ol_q <= 1'b0;
        rl_st <= 1'b0;
        rcr_used <= {{ k.crw }}'d0;
        rjp <= 5'd0;
        rb <= 5'd0;
        b_err <= 2'd0;
{{ q_reset }}
    end else begin
{{ q_update }}
        cr_used <= cr_used + { {{- k.crwm1 }}'d0, send_now} - { {{- k.crwm1 }}'d0, cr_ret};
        rcr_used <= rcr_used + { {{- k.crwm1 }}'d0, rl_send} - { {{- k.crwm1 }}'d0, rcr_ret};
        ov_q <= send_now || rl_send;
        oh_q <= hdr_send || rsp_go;
        ot_q <= ftr_send || rl_st;
        ol_q <= rl_send;
        if (send_now) od_q <= hdr_send ? header_pack$word : (pay_send ? word_q : footer_pack$word);
        else if (rsp_go) od_q <= rsp_hdr$word;
        else if (rl_st) od_q <= rl_ftr;
        rl_st <= rsp_go;
        if (rsp_go) rl_ftr <= rsp_ftr$word;
        case (b_st)
            2'd0: if (hdr_send) begin
                // No payload: straight to the footer, payload CRC 0.
                if (b_words == 5'd0) begin
                    b_st <= 2'd2;
                    crc_q <= 32'd0;
                end else b_st <= 2'd1;
            end
            2'd1: if (pay_send && (js == b_words - 5'd1)) begin
                b_st <= 2'd2;
                // A payload read with an error beat: the CRC is inverted
                // (stomped), so that no receiver takes the data as good.
                crc_q <= crc32$crc ^ {32{|(b_err | word_e)}};
            end
            default: if (ftr_send) begin
                b_st <= 2'd0;
                jp <= 5'd0;
                js <= 5'd0;
            end
        endcase
        if (prod_fire) begin
            word_q <= prod_word & prod_mask;
            word_e <= prod_e;
            jp <= jp + 5'd1;
        end
        // The packet's error kinds: from its header on, every word sent;
        // held until the next header (its tail is counted in `rdma_rx`).
        if (hdr_send) b_err <= 2'd0;
        else if (pay_send) b_err <= b_err | word_e;
        if (prod_fire) word_v <= 1'b1;
        else if (pay_send) word_v <= 1'b0;
        if (pay_send) js <= js + 5'd1;
        // Realigner.
        if (r_take) begin
            prev <= r_data;
            prev_e <= r_e;
            rb <= rb + 5'd1;
        end
        if (r_push) rjp <= rjp + 5'd1;
        if (r_done) begin
            rjp <= 5'd0;
            rb <= 5'd0;
        end
    end
end
always @(posedge clock) begin
    if (f_push) mq_mem[mq_tail] <= e_rec;
    if (rj_push) rj_mem[rj_tail] <= {l_src[3:0], l_beats, l_wtmp[8:4]};
    if (pf_push) pf_mem[pf_tail] <= pf_word;
    if (pf_push) pf_emem[pf_tail] <= pf_e;
end
// Bits the datapath does not need.
wire unused_tx = &{1'b0, l_btmp[3:0], l_wtmp[3:0], b_wtmp[3:0]{{ rdunused }}};

