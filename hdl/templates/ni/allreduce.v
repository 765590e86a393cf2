{# allreduce: the engine's first stage in the NI (see ni/allreduce.rs): registers and descriptor check (the `ar_check` child `ar$0`), the completion of a checked descriptor, AR_CNT / AR_REJ. Rendered only when ni.ar_communicators > 0. #}
// ===================== allreduce =====================
// An allreduce DOORBELL (DESC_CTRL op = allreduce) starts the child's
// check; the AXI4-Lite slave, the receive decisions and the landing B
// handshakes wait (ar_hold) until its completion is in the CQ or queued
// behind it, so every access and packet sees the state the golden model's
// atomic DOORBELL leaves. A completion finding no CQ room (entries and
// landing writes' reservations) waits here, oldest first; each CQ_POP
// moves the oldest one in, in the cycle after the pop (held too).
{{ aw_storage }}
// Landing writes' completions held while an allreduce step waits for a
// quiet AXI4 master (`cb_drn`): the golden model did the step (and, for
// the last one, posted the collective's completion) at the event that
// made it ready, before those writes landed; they enter the CQ, oldest
// first, once the step and what follows it at once are done (`lh_pop`,
// the NI still held: nothing sees the CQ meanwhile). Their slots stay
// reserved (cq_full).
{{ lh_storage }}
// Descriptors queued behind the running collective (golden `Engine::post`:
// an allreduce DOORBELL is refused QUEUE_FULL only when the queued ones
// and the completions waiting for CQ room fill ni.ar_queue_depth). Each
// entry {txid, pdid, op, dtype, count, src, dst, comm}, checked when it
// starts: when the collective before it ends (the golden model starts it
// in that instant), the NI holds (`aq_wt`) until the AXI4 master is quiet
// (the transmit reads of the packets picked while the collective ran
// drain through memory alone: rdma_tx's `pf_res`; the receive writes
// land), then runs its check (`aq_start`) as a DOORBELL's.
{{ aq_storage }}
reg [{{ aqw - 1 }}:0] aq_in;
reg [{{ aqw - 1 }}:0] aq_rd;
reg        aq_push;
reg        aq_pop;
reg        aq_start;
reg        aq_wt;
reg        ar_q;
reg [{{ r.cq.at("txid").width - 1 }}:0] ar_txid_in;
reg [{{ r.cq.at("pdid").width - 1 }}:0] ar_pdid_in;
reg        ar_hold_s;
reg        lh_push;
reg        lh_pop;
reg        lh_early;
reg [{{ lhw - 1 }}:0] lh_nb;
reg        rn_tmo_q;
{{ r.cq.decl("ae_") }}
reg        db_ar;
reg        ar_qfull;
reg        ar_hold;
reg        ar_cq;
reg        ar_conf;
reg        ar_drn;
reg [{{ r.cq.width() - 1 }}:0] ar_ent;
reg [{{ r.cq.width() - 1 }}:0] ar_new;
reg        aw_push;
reg        aw_pop;
reg [{{ r.cq.at("txid").width - 1 }}:0] ar_txid;
reg [{{ r.cq.at("pdid").width - 1 }}:0] ar_pdid;
reg [31:0] ar_ncomp;
reg        ar_rd_ok;
reg [11:0] ar_rej_i;
reg [31:0] ar_rd_val;
reg        ar_done;
reg  [2:0] ar_stat;
{{ copy }}
{{ send }}
{{ recv }}
// A checked descriptor's completion is due (`ar_done`, status `ar_stat`):
// at once for a failed check, after the copy for a single rank (`cp_fin`),
// when a collective ends (`rn_end`: every step done, a step's receive
// breaking the schedule (PROTOCOL), or the timeout; or the timeout fell
// during its check, `rn_chk_tmo`).
always @(*) begin
    ar_done = (ar$0$done && !cp_go && !rn_go) || cp_fin || rn_end;
    ar_stat = (cp_fin || rn_ok) ? {{ st_ok }}
            : cb_bad ? {{ st_protocol }}
            : (rn_end || rn_chk_tmo) ? {{ st_timeout }}
            : ar$0$status;
end
always @(*) begin
    db_ar = st_ctrl[w_ch]{{ c.bits.ctrl_op }} == {{ c.ar.op_allreduce.b() }};
    // Refused QUEUE_FULL when the queued descriptors and the completions
    // waiting for CQ room fill the queue (golden `Engine::post`); queued
    // while a collective runs (`ar_q`), else checked at once.
    ar_qfull = ({{ aw_count_wide }} + {{ aq_count_wide }}) >= {{ awd }};
    ar_q = rn_st != 2'd0;
    ar$0$clock = clock;
    ar$0$reset = reset;
    ar$0$node = node;
    ar$0$wr = wr_fire && a_arw;
    ar$0$wr_addr = w_off;
    ar$0$wr_data = s_wdata;
    ar$0$rd_addr = r_off;
    aq_push = wr_fire && a_ardb && (db_code == 4'd0) && ar_q;
    aq_in = {st_ctrl[w_ch]{{ c.bits.ctrl_txid }}, ch_pdid[w_ch], st_dest[w_ch]{{ c.ar.op }}, st_dest[w_ch]{{ c.ar.dtype }}, st_len[w_ch],
             st_laddr_hi[w_ch], st_laddr_lo[w_ch], st_raddr_hi[w_ch], st_raddr_lo[w_ch], st_dest[w_ch]{{ c.ar.comm }}};
    aq_rd = aq_mem[aq_head];
    // The queue's head starts once the engine is free and the AXI4 master
    // quiet (nothing else moves meanwhile: `aq_wt` holds the NI).
    aq_start = aq_wt && ar_quiet && !ar$0$busy && !ar$0$done && (cp_st == 4'd0) && (rn_st == 2'd0);
    aq_pop = aq_start;
    ar$0$chk = (wr_fire && a_ardb && (db_code == 4'd0) && !ar_q) || aq_start;
    if (aq_start) begin
        ar$0$d_op = aq_rd[125:123];
        ar$0$d_dtype = aq_rd[122:120];
        ar$0$d_count = aq_rd[119:88];
        ar$0$d_src = aq_rd[87:46];
        ar$0$d_dst = aq_rd[45:4];
        ar$0$d_comm = aq_rd[3:0];
        ar$0$d_pdid = aq_rd[{{ 125 + r.cq.at("pdid").width }}:126];
        ar_txid_in = aq_rd[{{ aqw - 1 }}:{{ 126 + r.cq.at("pdid").width }}];
    end else begin
        ar$0$d_op = st_dest[w_ch]{{ c.ar.op }};
        ar$0$d_dtype = st_dest[w_ch]{{ c.ar.dtype }};
        ar$0$d_count = st_len[w_ch];
        ar$0$d_src = {st_laddr_hi[w_ch], st_laddr_lo[w_ch]};
        ar$0$d_dst = {st_raddr_hi[w_ch], st_raddr_lo[w_ch]};
        ar$0$d_comm = st_dest[w_ch]{{ c.ar.comm }};
        ar$0$d_pdid = ch_pdid[w_ch];
        ar_txid_in = st_ctrl[w_ch]{{ c.bits.ctrl_txid }};
    end
    ar_pdid_in = ar$0$d_pdid;
    ar_hold_s = ar$0$busy || ar$0$done || ar_drn || (cp_st != 4'd0) || ar_prep || cb_wait || aq_wt;
    ar_hold = ar_hold_s || (lh_count != {{ lhw }}'d0);
    // A landing B is taken while held only during a step's wait, and in
    // the cycles from the pick that made a step ready to its hold
    // (`ar_rdy`: the golden model posts after the step).
    lh_push = lp_cq && (ar_hold || ar_rdy);
    // They drain once the NI would no longer hold; or, when the collective
    // has timed out meanwhile (it ends TIMEOUT once the step is written),
    // those landed before the golden model's timeout (`lh_nb`, the oldest)
    // drain first, ahead of the TIMEOUT (which waits for them: cb_due).
    // Decisions, CQ_POP and landings wait for ar_hold meanwhile.
    lh_early = (lh_nb != {{ lhw }}'d0) && rn_tmo && (rn_st != 2'd0) && !aq_wt && !rn_undec && !rn_ok && !cb_wait && (cp_st == 4'd0) && !ar$0$busy && !ar$0$done && !ar_drn;
    lh_pop = (lh_count != {{ lhw }}'d0) && ((!ar_hold_s && !ar_rdy) || lh_early);
    // The checked descriptor's completion entry.
    ae_pdid = ar_pdid;
    ae_peer = node;
    ae_txid = ar_txid;
    ae_reason = { {{- st_pad }}ar_stat};
    ae_status = (ar_stat == {{ st_ok }}) ? {{ c.cq.ok }} : {{ c.cq.failed }};
    ae_kind = {{ c.cq.allreduce }};
    ar_new = { {{- r.cq.concat("ae_") }}};
    // Straight into the CQ when it has room, nothing waits and nothing
    // else enters the CQ this cycle; else queued. A TIMEOUT falls in any
    // cycle, also one where a decision or a landing write posts an entry
    // (the golden model posts that one first, then the TIMEOUT's at the
    // cycle's end): the TIMEOUT's then enters the CQ in the next cycle
    // (`ar_drn`, held, so nothing sees it later than the golden's).
    ar_conf = cq_wr || lp_cqd || lh_pop;
    ar_cq = (ar_done && !ar_conf && !cq_full && (aw_count == {{ aww }}'d0)) || (ar_drn && !cq_full && (aw_count != {{ aww }}'d0));
    ar_ent = ar_done ? ar_new : aw_mem[aw_head];
    aw_push = ar_done && !ar_cq;
    aw_pop = ar_drn && ar_cq;
    // AR_CNT: COMPLETIONS counts every checked descriptor, FRAGS_SENT every
    // fragment picked, FRAGS_RECEIVED every fragment accepted; AR_REJ[r]
    // the fragments the engine's check r rejected.
    ar_rd_ok = 1'b1;
    ar_rd_val = 32'd0;
    ar_rej_i = r_off - {{ c.ar.rej_first.h() }};
    if (ar$0$rd_ok) ar_rd_val = ar$0$rd_data;
    else if ((r_off >= {{ c.ar.cnt_first.h() }}) && (r_off < {{ c.ar.cnt_end.h() }})) begin
        if (r_off[3:2] == {{ c.ar.cnt_completions.b() }}) ar_rd_val = ar_ncomp;
        else if (r_off[3:2] == {{ c.ar.cnt_frags_sent.b() }}) ar_rd_val = ar_nsent;
        else if (r_off[3:2] == {{ c.ar.cnt_frags_received.b() }}) ar_rd_val = ar_nrecv;
    end else if ((r_off >= {{ c.ar.rej_first.h() }}) && (r_off < {{ c.ar.rej_end.h() }})) ar_rd_val = ar_rej[ar_rej_i[5:2]];
    else ar_rd_ok = 1'b0;
end
always @(posedge clock) begin
    if (aw_push) aw_mem[aw_tail] <= ar_new;
    if (aq_push) aq_mem[aq_tail] <= aq_in;
    if (lh_push) lh_mem[lh_tail] <= lp_cq_ent;
end
always @(posedge clock) begin
    if (reset) begin
        ar_drn <= 1'b0;
        ar_txid <= {{ r.cq.at("txid").width }}'d0;
        ar_pdid <= {{ r.cq.at("pdid").width }}'d0;
        ar_ncomp <= 32'd0;
{{ aw_reset }}
{{ aq_reset }}
{{ lh_reset }}
        aq_wt <= 1'b0;
        lh_nb <= {{ lhw }}'d0;
        rn_tmo_q <= 1'b0;
    end else begin
        // A completion due in the cycle of a CQ_POP that finds the CQ full
        // (a TIMEOUT) enters it in the next cycle, held: the golden model
        // pops first (the AXI4-Lite write), then times out and drains.
        ar_drn <= (wr_fire && a_cqpop && (aw_count != {{ aww }}'d0)) || (ar_done && ar_conf && (aw_count == {{ aww }}'d0))
                  || (ar_done && cq_full && cq_pop && (aw_count == {{ aww }}'d0));
        if (ar$0$chk) begin
            ar_txid <= ar_txid_in;
            ar_pdid <= ar_pdid_in;
        end
        if (ar_done) ar_ncomp <= ar_ncomp + 32'd1;
{{ aw_update }}
{{ aq_update }}
{{ lh_update }}
        // A completion leaves the engine free: the queue's head is next
        // (a DOORBELL queued in that same cycle counts: the golden model
        // takes the AXI4-Lite write before the cycle's time step).
        if (aq_start) aq_wt <= 1'b0;
        else if (ar_done && ((aq_count != {{ aqcw }}'d0) || aq_push)) aq_wt <= 1'b1;
        // A landing in the cycle the timeout falls posts first (golden
        // order), so it counts as landed before it.
        rn_tmo_q <= rn_tmo;
        lh_nb <= lh_nb + ((lh_push && !rn_tmo_q) ? {{ lhw }}'d1 : {{ lhw }}'d0) - ((lh_pop && (lh_nb != {{ lhw }}'d0)) ? {{ lhw }}'d1 : {{ lhw }}'d0);
    end
end
// The child's AXI4-Lite read answer is used only through ar_rd_ok's decode;
// the counter offsets' low bits are word alignment (checked by the decode).
wire unused_allreduce = &{1'b0, r_off[1:0], ar_rej_i[11:6], ar_rej_i[1:0]};
