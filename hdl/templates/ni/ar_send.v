{# ar_send: the allreduce collective of two ranks or more in the NI (see ni/allreduce.rs): its steps walked, each step's send range sent as AllreduceFragment packets through rdma_tx (golden `Engine::emit`), and the no-progress timeout (golden `Engine::advance`). Every code and field layout comes from the golden definitions through the render keys. #}
// ---- allreduce collective: steps, fragments, timeout ----
// A descriptor checked OK on a slot of two ranks or more runs here
// (`rn_st` 1 a step is being prepared by the child's sequencer, 2 its
// send range goes out as fragments, 3 it waits for its receive, which
// ar_recv.v takes; once closed the step is combined or stored by
// ar_copy.v's machine, then the next step is prepared). A step's fragments are picked
// by rdma_tx's scheduler before the channels (after the read-serve
// engine), each `min(P, left)` bytes of the send range read over the
// AXI4 master like an RDMA write's payload, with header dest = the
// partner's coordinates, PDID = the slot's, vaddr = where the bytes land
// in the partner's bank (its layout offset of the step, in bytes, plus
// j·P), and footer txid = the slot's sequence number, flags = the step
// index, seq = j, first / last, user = communicator, op, dtype. A step
// with nothing to receive is done after its last fragment: the next one
// is prepared. While a step is prepared (2 cycles or more; the golden
// model moves on at once) the NI holds as during a check (`ar_hold`).
//
// Time (golden `Engine::advance`, one cycle per cycle): `rn_t` counts the
// cycles since the collective's last progress (its DOORBELL, a fragment
// picked, a fragment of its sequence number accepted: `af_prog`), `rn_tn`
// its value after this cycle; with AR_TIMEOUT (as written
// this cycle) T > 0, `rn_tn >= T` ends the collective TIMEOUT in this
// cycle, as the golden model does at this cycle's end: also at the end
// of the check, when the timeout fell during it (nothing is observable
// while the NI holds).
reg  [1:0] rn_st;
reg [31:0] rn_t;
reg [31:0] rn_tn;
reg [31:0] rn_since;
reg        rn_event;
reg        rn_tmo;
reg        rn_go;
reg        rn_chk_tmo;
reg        rn_ok;
reg        rn_end;
reg        ar_frag;
reg        ar_prep;
reg        ar_next;
reg [31:0] fr_rem;
reg [41:0] fr_src;
reg [41:0] fr_vaddr;
reg [{{ seqw - 1 }}:0] fr_j;
reg  [{{ flagsw - 1 }}:0] fr_index;
reg [{{ coordsw - 1 }}:0] fr_dest;
reg        fr_rempty;
reg [{{ txidw - 1 }}:0] fr_seq;
reg [{{ pdidw - 1 }}:0] fr_pdid;
reg [{{ userw - 1 }}:0] fr_user;
reg [31:0] ar_nsent;
reg [31:0] fr_bytes;
reg [41:0] fr_from;
reg [41:0] fr_land;
reg        rn_indst;
reg        rn_tmx;
reg        cb_sent;
reg        cb_wait;
reg        cb_bad;
reg        cb_drn;
reg        cb_go;
reg        cb_due;
reg        rn_undec;
reg        ar_rdy;
reg [41:0] cb_from;
reg [41:0] cb_mine;
reg [41:0] cb_to;
reg [30:0] cb_bytes;
always @(*) begin
    // (A queued descriptor's check is no event: the golden model started
    // it when the collective before it ended, see `rn_t` below.)
    rn_event = (ar$0$chk && !aq_start) || (pick_now && pick_ar) || af_prog;
    rn_tn = rn_event ? 32'd1 : ((rn_t == 32'hFFFF_FFFF) ? rn_t : rn_t + 32'd1);
    rn_tmo = (ar$0$timeout != 32'd0) && (rn_tn >= ar$0$timeout);
    // The current step is ready (every fragment picked, its receive
    // closed: `cb_closed`, ar_recv.v) and waits (`cb_wait`, the NI held):
    // PROTOCOL when the record breaks the schedule (`cb_bad`: another
    // source than the partner, another byte count, op or dtype), else its
    // combining or storing step starts once the AXI4 master is quiet
    // (`cb_go`; meanwhile receive writes may land, `cb_drn`).
    cb_wait = (rn_st == 2'd3) && cb_closed;
    cb_bad = cb_wait && !cb_rok;
    cb_drn = cb_wait && cb_rok && (cp_st == 4'd0);
    cb_go = cb_drn && ar_quiet;
    // The golden model does the step at the event that makes it ready (a
    // fragment accepted, or the step's last fragment picked) and times
    // out at that cycle's end at the earliest: a timeout falling from that
    // event until the step is written waits for it (the NI holds, nothing
    // sees the difference), then ends the collective.
    // A step that receives nothing is done at its last fragment's pick,
    // and after the last step the golden model completes OK at once, in
    // that same event: a timeout falling from that pick until the next
    // step is presented (`rn_undec`: the sequencer has not answered yet;
    // the NI holds from the cycle after the pick's LOAD, and takes no
    // AXI4-Lite access at the pick and the LOAD) waits too. Then OK wins
    // when the steps are over (`rn_ok`), else the collective ends TIMEOUT.
    rn_undec = (rn_st == 2'd1) && !ar$0$st_valid && !ar$0$st_done;
    // The step became ready at this pick (its last fragment, the receive
    // closed or empty) or at an earlier one whose LOAD is still due: the
    // golden model did the step (and, after the last one, posted the
    // collective's completion) at the pick, before a landing B of that
    // cycle or of the LOAD's, so such a B's completion is held
    // (`lh_push`, allreduce.v) until the NI holds as for the step.
    ar_rdy = (pick_now && pick_ar && (fr_rem <= 32'd{{ p }}) && (fr_rempty || cb_closed))
             || ((rn_st == 2'd2) && (fr_rem != 32'd0) && cb_sent && (fr_rempty || cb_closed));
    cb_due = cb_trig_rx || cb_wait || (cp_step && (cp_st != 4'd0)) || lh_pop || rn_undec
             || ((rn_st == 2'd2) && ((fr_rem == 32'd0) || cb_sent) && (fr_rempty || cb_closed))
             || (pick_now && pick_ar && (fr_rem <= 32'd{{ p }}) && (fr_rempty || cb_closed));
    rn_tmx = rn_tmo && !cb_due && !((rn_st == 2'd1) && ar$0$st_done);
    // Where the step's bytes are: its receive range in this rank's bank,
    // the partial (the source before this rank's first combining step,
    // the destination after), the destination.
    cb_bytes = cb_need[30:0];
    cb_from = ar$0$run_scratch + (ar$0$run_seq[0] ? {11'd0, ar$0$run_half} : 42'd0)
              + ({6'd0, ar$0$st_my_off} << ar$0$run_e);
    cb_mine = (rn_indst ? ar$0$dst : ar$0$src) + ({10'd0, ar$0$st_recv_lo} << ar$0$run_e);
    cb_to = ar$0$dst + ({10'd0, ar$0$st_recv_lo} << ar$0$run_e);
    // The check passed on a slot of two ranks or more.
    rn_go = ar$0$done && (ar$0$status == {{ st_ok }}) && !ar$0$one && !rn_tmo;
    rn_chk_tmo = ar$0$done && (ar$0$status == {{ st_ok }}) && !ar$0$one && rn_tmo;
    // Every step done without a receive: the collective is over.
    rn_ok = (rn_st == 2'd1) && ar$0$st_done;
    rn_end = (rn_st != 2'd0) && (rn_tmx || rn_ok || cb_bad);
    ar_frag = (rn_st == 2'd2) && (fr_rem != 32'd0);
    ar_prep = (rn_st == 2'd1) || ((rn_st == 2'd2) && (fr_rem == 32'd0));
    ar_next = (rn_st == 2'd2) && (fr_rem == 32'd0) && fr_rempty && !rn_tmx;
    ar$0$run = rn_go;
    ar$0$run_on = rn_st != 2'd0;
    ar$0$run_next = ar_next || cp_sfin;
    ar$0$seq_adv = rn_end || rn_chk_tmo || cp_fin;
    // The step presented, in bytes.
    fr_bytes = (ar$0$st_send_hi - ar$0$st_send_lo) << ar$0$run_e;
    fr_from = (rn_indst ? ar$0$dst : ar$0$src) + ({10'd0, ar$0$st_send_lo} << ar$0$run_e);
    fr_land = {6'd0, ar$0$st_their_off} << ar$0$run_e;
end
always @(posedge clock) begin
    if (reset) begin
        rn_st <= 2'd0;
        rn_t <= 32'd0;
        rn_since <= 32'd0;
        ar_nsent <= 32'd0;
    end else begin
        // A collective that ends TIMEOUT ended, in the golden model, in the
        // cycle its timeout first fell (`rn_since` cycles ago: the count
        // reached T, or a write made T smaller than the count), and a
        // queued descriptor started then: the count goes on from there.
        // One that ends OK or PROTOCOL ended at its last event, where the
        // count started again.
        if ((rn_end && !rn_ok && !cb_bad) || rn_chk_tmo) rn_t <= rn_since;
        else rn_t <= rn_tn;
        if (!rn_tmo) rn_since <= 32'd0;
        else if (rn_since != 32'hFFFF_FFFF) rn_since <= rn_since + 32'd1;
        if (pick_now && pick_ar) ar_nsent <= ar_nsent + 32'd1;
        if (pick_now && pick_ar && (fr_rem <= 32'd{{ p }})) cb_sent <= 1'b1;
        if (cb_go && ar$0$st_combine) rn_indst <= 1'b1;
        if (rn_go) begin
            rn_st <= 2'd1;
            rn_indst <= 1'b0;
            cb_sent <= 1'b0;
            fr_seq <= ar$0$run_seq;
            fr_pdid <= ar$0$run_pdid;
            fr_user <= { {{- user_word }}};
        end else if (rn_end) rn_st <= 2'd0;
        else case (rn_st)
            // (A timeout due meanwhile ends the collective here, next
            // cycle at the latest, once held landing entries have drained.)
            2'd1: if (ar$0$st_valid && !rn_tmo) begin
                rn_st <= 2'd2;
                cb_sent <= 1'b0;
                fr_rem <= fr_bytes;
                fr_src <= fr_from;
                fr_vaddr <= fr_land;
                fr_j <= {{ seqw }}'d0;
                fr_index <= ar$0$st_index;
                fr_dest <= ar$0$st_dest;
                fr_rempty <= ar$0$st_recv_empty;
            end
            2'd2: if (fr_rem == 32'd0) rn_st <= fr_rempty ? 2'd1 : 2'd3;
            // The step written: the next one.
            2'd3: if (cp_sfin) rn_st <= 2'd1;
            default: ;
        endcase
        // A fragment loaded: the rest of the step's send range.
        if (eng_load && e_ar) begin
            fr_rem <= fr_rem - {23'd0, l_n};
            fr_src <= fr_src + {33'd0, l_n};
            fr_vaddr <= fr_vaddr + {33'd0, l_n};
            fr_j <= fr_j + {{ seqw }}'d1;
        end
    end
end
