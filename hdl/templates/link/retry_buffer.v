// retry_buffer: generated from hdl/templates/link/retry_buffer.v ({{ words }} words).
// Ring of words sent and not yet acked; a queue of closed frames (seq, end).
// Pointers are {{ a1 }}-bit free-running word counts; offsets from `base` order them.
// Inputs act in the golden model's order: ack, stop, start, take, push, close.
// The ring is block RAM: one write port (push at `head`) and one registered
// read port at this cycle's replay pointer, so `replay_data`/`replay_ctrl`
// show, one cycle later, the word that `replay_valid` announced (link_tx
// registers it into its PHY word anyway). The read is never of the slot
// being written: a shown word lies in [base, head) and a push needs
// head - base < words.
// Two combinational blocks: the first depends on the ack inputs and the
// state only (its outputs decide link_tx's start/take/push/close), the
// second on everything; so link_tx -> retry -> link_tx is no loop.
(* ram_style = "block" *)
reg [64:0] ring [0:{{ words_m1 }}];
reg [64:0] rd_q;
reg [{{ seq_m1 }}:0] fseq [0:{{ frames_m1 }}];
reg [{{ a }}:0] fend [0:{{ frames_m1 }}];
reg [{{ a }}:0] base;
reg [{{ a }}:0] head;
reg [{{ a }}:0] rp;
reg        rep;
reg [{{ fa_m1 }}:0] fhead;
reg [{{ fa_m1 }}:0] ftail;
reg [{{ fa }}:0] fcount;
initial base = {{ a1 }}'d0;
initial head = {{ a1 }}'d0;
initial rp = {{ a1 }}'d0;
initial rep = 1'b0;
initial fhead = {{ fa }}'d0;
initial ftail = {{ fa }}'d0;
initial fcount = {{ fa1 }}'d0;
reg [{{ seq_m1 }}:0] k;
reg [{{ fa_m1 }}:0] kidx;
reg [{{ fa_m1 }}:0] last;
reg [{{ fa }}:0] remaining;
reg [{{ a }}:0] base1;
reg [{{ a }}:0] fend1;
reg        rep1;
reg [{{ a }}:0] rp1;
reg        rep2;
reg [{{ a }}:0] rp2;
reg        rep_n;
reg [{{ a }}:0] rp_n;
reg        push_ok;
reg [{{ a }}:0] head_n;
reg        close_ok;
always @(*) begin
    // Ack: frame k of the queue (k = ack_seq - oldest) is held when k < fcount.
    k = ack_seq - fseq[fhead];
    ack_ok = ack_valid && (fcount != {{ fa1 }}'d0) && (k < fcount);
    kidx = fhead + k[{{ fa_m1 }}:0];
    base1 = ack_ok ? fend[kidx] : base;
    remaining = ack_ok ? (fcount - k - {{ fa1 }}'d1) : fcount;
    last = ftail - {{ fa }}'d1;
    fend1 = (remaining != {{ fa1 }}'d0) ? fend[last] : base1;
    // A replay behind the new base jumps to it (or ends with nothing left).
    rep1 = rep;
    rp1 = rp;
    if (ack_ok && rep && ((rp - base) < (base1 - base))) begin
        rep1 = (base1 != fend1);
        rp1 = base1;
    end
    replaying = rep1;
    frames_left = remaining;
    used_left = {{ used_left_expr }};
    frames = fcount;
    oldest = (fcount != {{ fa1 }}'d0) ? fseq[fhead] : {{ seq }}'d0;
end
always @(*) begin
    rep2 = stop ? 1'b0 : rep1;
    rp2 = rp1;
    if (start) begin
        rep2 = (remaining != {{ fa1 }}'d0);
        rp2 = base1;
    end
    replay_valid = rep2;
    // Take: the replay ends after the last closed frame.
    rep_n = rep2;
    rp_n = rp2;
    if (take && rep2) begin
        rp_n = rp2 + {{ a1 }}'d1;
        rep_n = ((rp_n - base1) < (fend1 - base1));
    end
    push_ok = push_valid && ((head - base1) != {{ a1 }}'d{{ words }});
    head_n = push_ok ? (head + {{ a1 }}'d1) : head;
    close_ok = close_valid && (remaining != {{ fa1 }}'d{{ frames }});
    used = {{ used_expr }};
end
always @(*) begin
    {replay_ctrl, replay_data} = rd_q;
end
// The ring's two ports: a registered read (old data on the cycle of a write
// to the same slot, which never happens for a word that is shown).
always @(posedge clock) begin
    rd_q <= ring[rp2[{{ a_m1 }}:0]];
    if (push_ok && !reset) ring[head[{{ a_m1 }}:0]] <= {push_ctrl, push_data};
end
always @(posedge clock) begin
    if (reset) begin
        base <= {{ a1 }}'d0;
        head <= {{ a1 }}'d0;
        rp <= {{ a1 }}'d0;
        rep <= 1'b0;
        fhead <= {{ fa }}'d0;
        ftail <= {{ fa }}'d0;
        fcount <= {{ fa1 }}'d0;
    end else begin
        if (close_ok) begin
            fseq[ftail] <= close_seq;
            fend[ftail] <= head_n;
            ftail <= ftail + {{ fa }}'d1;
        end
        fcount <= remaining + { {{ fa }}'d0, close_ok};
        if (ack_ok) fhead <= kidx + {{ fa }}'d1;
        base <= base1;
        head <= head_n;
        rep <= rep_n;
        rp <= rp_n;
    end
end
