export namespace app {
	
	export class AddGatewayRequest {
	    name: string;
	    url: string;
	    kind?: string;
	    auth: string;
	    secret?: string;
	    username?: string;
	    ca_file?: string;
	    bridge?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new AddGatewayRequest(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.url = source["url"];
	        this.kind = source["kind"];
	        this.auth = source["auth"];
	        this.secret = source["secret"];
	        this.username = source["username"];
	        this.ca_file = source["ca_file"];
	        this.bridge = source["bridge"];
	    }
	}
	export class Transport {
	    conversation: string;
	    interrupted: string;
	    badge?: string;
	    follow_hint?: string;
	    id_hint?: string;
	    lists_sessions: boolean;
	    ask_new: boolean;
	    ask_followed: boolean;
	    follow_by_id: boolean;
	    starts_runs: boolean;
	    continues_sessions: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Transport(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.conversation = source["conversation"];
	        this.interrupted = source["interrupted"];
	        this.badge = source["badge"];
	        this.follow_hint = source["follow_hint"];
	        this.id_hint = source["id_hint"];
	        this.lists_sessions = source["lists_sessions"];
	        this.ask_new = source["ask_new"];
	        this.ask_followed = source["ask_followed"];
	        this.follow_by_id = source["follow_by_id"];
	        this.starts_runs = source["starts_runs"];
	        this.continues_sessions = source["continues_sessions"];
	    }
	}
	export class ApprovalView {
	    key: string;
	    kind: string;
	    gateway: string;
	    session: string;
	    stored_session?: string;
	    run?: string;
	    request_id?: string;
	    queue_id?: string;
	    by_order?: boolean;
	    command: string;
	    description?: string;
	    pattern_keys?: string[];
	    choices: string[];
	    question?: string;
	    prompt?: string;
	    env_var?: string;
	    question_id?: string;
	    questions?: number;
	    // Go type: time
	    received_at: any;
	    // Go type: time
	    expires_at: any;
	    dialect: string;
	    state: string;
	    uncertain?: boolean;
	    // Go type: approval
	    outcome: any;
	    last_error?: string;
	    truncated?: boolean;
	    command_bytes?: number;
	    conflict?: string;
	    epoch?: string;
	    unbound?: string;
	    fields?: approval.Field[];
	    session_title?: string;
	    id: string;
	    display_command: string;
	    display: approval.Display;
	    transport: Transport;
	
	    static createFrom(source: any = {}) {
	        return new ApprovalView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.key = source["key"];
	        this.kind = source["kind"];
	        this.gateway = source["gateway"];
	        this.session = source["session"];
	        this.stored_session = source["stored_session"];
	        this.run = source["run"];
	        this.request_id = source["request_id"];
	        this.queue_id = source["queue_id"];
	        this.by_order = source["by_order"];
	        this.command = source["command"];
	        this.description = source["description"];
	        this.pattern_keys = source["pattern_keys"];
	        this.choices = source["choices"];
	        this.question = source["question"];
	        this.prompt = source["prompt"];
	        this.env_var = source["env_var"];
	        this.question_id = source["question_id"];
	        this.questions = source["questions"];
	        this.received_at = this.convertValues(source["received_at"], null);
	        this.expires_at = this.convertValues(source["expires_at"], null);
	        this.dialect = source["dialect"];
	        this.state = source["state"];
	        this.uncertain = source["uncertain"];
	        this.outcome = this.convertValues(source["outcome"], null);
	        this.last_error = source["last_error"];
	        this.truncated = source["truncated"];
	        this.command_bytes = source["command_bytes"];
	        this.conflict = source["conflict"];
	        this.epoch = source["epoch"];
	        this.unbound = source["unbound"];
	        this.fields = this.convertValues(source["fields"], approval.Field);
	        this.session_title = source["session_title"];
	        this.id = source["id"];
	        this.display_command = source["display_command"];
	        this.display = this.convertValues(source["display"], approval.Display);
	        this.transport = this.convertValues(source["transport"], Transport);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class BridgeOffer {
	    name: string;
	    offer: string;
	    hint?: string;
	    missing?: string;
	    auth: string[];
	
	    static createFrom(source: any = {}) {
	        return new BridgeOffer(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.offer = source["offer"];
	        this.hint = source["hint"];
	        this.missing = source["missing"];
	        this.auth = source["auth"];
	    }
	}
	export class BridgeView {
	    name: string;
	    state: string;
	    text: string;
	    error?: string;
	
	    static createFrom(source: any = {}) {
	        return new BridgeView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.state = source["state"];
	        this.text = source["text"];
	        this.error = source["error"];
	    }
	}
	export class GatewayFormView {
	    name: string;
	    url: string;
	    kind?: string;
	    auth: string;
	    secret?: string;
	    username?: string;
	    ca_file?: string;
	    bridge?: boolean;
	    has_secret: boolean;
	
	    static createFrom(source: any = {}) {
	        return new GatewayFormView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.url = source["url"];
	        this.kind = source["kind"];
	        this.auth = source["auth"];
	        this.secret = source["secret"];
	        this.username = source["username"];
	        this.ca_file = source["ca_file"];
	        this.bridge = source["bridge"];
	        this.has_secret = source["has_secret"];
	    }
	}
	export class SignIn {
	    name: string;
	    label: string;
	    secret?: string;
	    username?: boolean;
	    hint?: string;
	
	    static createFrom(source: any = {}) {
	        return new SignIn(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.label = source["label"];
	        this.secret = source["secret"];
	        this.username = source["username"];
	        this.hint = source["hint"];
	    }
	}
	export class GatewayKind {
	    kind: string;
	    title: string;
	    hint?: string;
	    default_url: string;
	    detect: boolean;
	    auth: SignIn[];
	    transport: Transport;
	    bridge?: BridgeOffer;
	    beside?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new GatewayKind(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.kind = source["kind"];
	        this.title = source["title"];
	        this.hint = source["hint"];
	        this.default_url = source["default_url"];
	        this.detect = source["detect"];
	        this.auth = this.convertValues(source["auth"], SignIn);
	        this.transport = this.convertValues(source["transport"], Transport);
	        this.bridge = this.convertValues(source["bridge"], BridgeOffer);
	        this.beside = source["beside"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class GatewayView {
	    name: string;
	    url: string;
	    kind: string;
	    state: string;
	    error?: string;
	    may_have_missed_events: boolean;
	    missed_reason?: string;
	    delivery?: string;
	    delivery_evidence?: string;
	    version?: string;
	    transport: Transport;
	    bridge?: BridgeView;
	
	    static createFrom(source: any = {}) {
	        return new GatewayView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.url = source["url"];
	        this.kind = source["kind"];
	        this.state = source["state"];
	        this.error = source["error"];
	        this.may_have_missed_events = source["may_have_missed_events"];
	        this.missed_reason = source["missed_reason"];
	        this.delivery = source["delivery"];
	        this.delivery_evidence = source["delivery_evidence"];
	        this.version = source["version"];
	        this.transport = this.convertValues(source["transport"], Transport);
	        this.bridge = this.convertValues(source["bridge"], BridgeView);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class HistoryEntry {
	    seq: number;
	    // Go type: time
	    at: any;
	    kind: string;
	    key: string;
	    gateway: string;
	    session?: string;
	    stored_session?: string;
	    dialect?: string;
	    command?: string;
	    masked_command?: string;
	    description?: string;
	    hidden?: string;
	    state: string;
	    uncertain?: boolean;
	    choice?: string;
	    surface?: string;
	    reason?: string;
	    detail?: string;
	    error?: string;
	    request_kind?: string;
	    question?: string;
	    guards?: number;
	    choices?: string[];
	    request_id?: string;
	    queue_id?: string;
	    by_order?: boolean;
	    epoch?: string;
	    truncated?: boolean;
	    command_bytes?: number;
	    conflict?: string;
	    unbound?: string;
	    session_title?: string;
	    display_command?: string;
	    display_error?: string;
	    display_gateway?: string;
	    display_question?: string;
	    display_choice?: string;
	    display_session?: string;
	    display_hidden?: string;
	
	    static createFrom(source: any = {}) {
	        return new HistoryEntry(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.seq = source["seq"];
	        this.at = this.convertValues(source["at"], null);
	        this.kind = source["kind"];
	        this.key = source["key"];
	        this.gateway = source["gateway"];
	        this.session = source["session"];
	        this.stored_session = source["stored_session"];
	        this.dialect = source["dialect"];
	        this.command = source["command"];
	        this.masked_command = source["masked_command"];
	        this.description = source["description"];
	        this.hidden = source["hidden"];
	        this.state = source["state"];
	        this.uncertain = source["uncertain"];
	        this.choice = source["choice"];
	        this.surface = source["surface"];
	        this.reason = source["reason"];
	        this.detail = source["detail"];
	        this.error = source["error"];
	        this.request_kind = source["request_kind"];
	        this.question = source["question"];
	        this.guards = source["guards"];
	        this.choices = source["choices"];
	        this.request_id = source["request_id"];
	        this.queue_id = source["queue_id"];
	        this.by_order = source["by_order"];
	        this.epoch = source["epoch"];
	        this.truncated = source["truncated"];
	        this.command_bytes = source["command_bytes"];
	        this.conflict = source["conflict"];
	        this.unbound = source["unbound"];
	        this.session_title = source["session_title"];
	        this.display_command = source["display_command"];
	        this.display_error = source["display_error"];
	        this.display_gateway = source["display_gateway"];
	        this.display_question = source["display_question"];
	        this.display_choice = source["display_choice"];
	        this.display_session = source["display_session"];
	        this.display_hidden = source["display_hidden"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class LiveSessionView {
	    id: string;
	    key: string;
	    name: string;
	    shown_id: string;
	    status: string;
	    preview?: string;
	    tool?: string;
	    last_text?: string;
	    messages: number;
	    followed: boolean;
	    elsewhere: boolean;
	    offered: boolean;
	    declined: boolean;
	
	    static createFrom(source: any = {}) {
	        return new LiveSessionView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.key = source["key"];
	        this.name = source["name"];
	        this.shown_id = source["shown_id"];
	        this.status = source["status"];
	        this.preview = source["preview"];
	        this.tool = source["tool"];
	        this.last_text = source["last_text"];
	        this.messages = source["messages"];
	        this.followed = source["followed"];
	        this.elsewhere = source["elsewhere"];
	        this.offered = source["offered"];
	        this.declined = source["declined"];
	    }
	}
	export class LiveGatewayView {
	    gateway: string;
	    policy: string;
	    error?: string;
	    sessions: LiveSessionView[];
	
	    static createFrom(source: any = {}) {
	        return new LiveGatewayView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.gateway = source["gateway"];
	        this.policy = source["policy"];
	        this.error = source["error"];
	        this.sessions = this.convertValues(source["sessions"], LiveSessionView);
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	
	export class ProbeResult {
	    reachable: boolean;
	    auth_required: boolean;
	    suggested_auth: string;
	    version?: string;
	    error?: string;
	
	    static createFrom(source: any = {}) {
	        return new ProbeResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.reachable = source["reachable"];
	        this.auth_required = source["auth_required"];
	        this.suggested_auth = source["suggested_auth"];
	        this.version = source["version"];
	        this.error = source["error"];
	    }
	}
	
	export class Snapshot {
	    version: string;
	    // Go type: time
	    now: any;
	    gateways: GatewayView[];
	    sessions: service.SessionView[];
	    live: LiveGatewayView[];
	    approvals: ApprovalView[];
	    recent: ApprovalView[];
	    choices: source.ChoiceInfo[];
	    notifications_paused: boolean;
	    secrets_session_only: boolean;
	    autostart: boolean;
	    tray_missing: boolean;
	    quit_without_tray: boolean;
	    tray_notice_dismissed?: boolean;
	    notify_run_finished: boolean;
	    do_not_disturb?: boolean;
	    warnings?: string[];
	    audit_error?: string;
	
	    static createFrom(source: any = {}) {
	        return new Snapshot(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.version = source["version"];
	        this.now = this.convertValues(source["now"], null);
	        this.gateways = this.convertValues(source["gateways"], GatewayView);
	        this.sessions = this.convertValues(source["sessions"], service.SessionView);
	        this.live = this.convertValues(source["live"], LiveGatewayView);
	        this.approvals = this.convertValues(source["approvals"], ApprovalView);
	        this.recent = this.convertValues(source["recent"], ApprovalView);
	        this.choices = this.convertValues(source["choices"], source.ChoiceInfo);
	        this.notifications_paused = source["notifications_paused"];
	        this.secrets_session_only = source["secrets_session_only"];
	        this.autostart = source["autostart"];
	        this.tray_missing = source["tray_missing"];
	        this.quit_without_tray = source["quit_without_tray"];
	        this.tray_notice_dismissed = source["tray_notice_dismissed"];
	        this.notify_run_finished = source["notify_run_finished"];
	        this.do_not_disturb = source["do_not_disturb"];
	        this.warnings = source["warnings"];
	        this.audit_error = source["audit_error"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class StoredSessionUI {
	    id: string;
	    shown_id: string;
	    name: string;
	    preview?: string;
	    messages: number;
	    // Go type: time
	    last_active: any;
	    turn?: string;
	
	    static createFrom(source: any = {}) {
	        return new StoredSessionUI(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.id = source["id"];
	        this.shown_id = source["shown_id"];
	        this.name = source["name"];
	        this.preview = source["preview"];
	        this.messages = source["messages"];
	        this.last_active = this.convertValues(source["last_active"], null);
	        this.turn = source["turn"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class StoredSessionsUI {
	    gateway: string;
	    sessions: StoredSessionUI[];
	    more?: boolean;
	    note?: string;
	
	    static createFrom(source: any = {}) {
	        return new StoredSessionsUI(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.gateway = source["gateway"];
	        this.sessions = this.convertValues(source["sessions"], StoredSessionUI);
	        this.more = source["more"];
	        this.note = source["note"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class TestResult {
	    ok: boolean;
	    stage: string;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new TestResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.ok = source["ok"];
	        this.stage = source["stage"];
	        this.message = source["message"];
	    }
	}
	
	export class WindowGeometry {
	    x: number;
	    y: number;
	    width: number;
	    height: number;
	    maximised?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new WindowGeometry(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.x = source["x"];
	        this.y = source["y"];
	        this.width = source["width"];
	        this.height = source["height"];
	        this.maximised = source["maximised"];
	    }
	}

}

export namespace approval {
	
	export class Confirmed {
	    always?: boolean;
	    hidden?: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Confirmed(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.always = source["always"];
	        this.hidden = source["hidden"];
	    }
	}
	export class Field {
	    name: string;
	    value: string;
	
	    static createFrom(source: any = {}) {
	        return new Field(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.name = source["name"];
	        this.value = source["value"];
	    }
	}
	export class Display {
	    command: string;
	    hidden?: string;
	    masked: string;
	    first_line: string;
	    description?: string;
	    gateway: string;
	    session: string;
	    session_id: string;
	    markers?: boolean;
	    lines: number;
	    offered?: string[];
	    deny_only?: string;
	    question?: string;
	    prompt?: string;
	    env_var?: string;
	    choices?: string[];
	    unseen?: boolean;
	    title?: string;
	    fields?: Field[];
	    expiry_known: boolean;
	
	    static createFrom(source: any = {}) {
	        return new Display(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.command = source["command"];
	        this.hidden = source["hidden"];
	        this.masked = source["masked"];
	        this.first_line = source["first_line"];
	        this.description = source["description"];
	        this.gateway = source["gateway"];
	        this.session = source["session"];
	        this.session_id = source["session_id"];
	        this.markers = source["markers"];
	        this.lines = source["lines"];
	        this.offered = source["offered"];
	        this.deny_only = source["deny_only"];
	        this.question = source["question"];
	        this.prompt = source["prompt"];
	        this.env_var = source["env_var"];
	        this.choices = source["choices"];
	        this.unseen = source["unseen"];
	        this.title = source["title"];
	        this.fields = this.convertValues(source["fields"], Field);
	        this.expiry_known = source["expiry_known"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}

}

export namespace service {
	
	export class AskResult {
	    gateway: string;
	    transport: string;
	    session: string;
	    stored_session?: string;
	    new_session?: boolean;
	    status: string;
	    note?: string;
	    name?: string;
	
	    static createFrom(source: any = {}) {
	        return new AskResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.gateway = source["gateway"];
	        this.transport = source["transport"];
	        this.session = source["session"];
	        this.stored_session = source["stored_session"];
	        this.new_session = source["new_session"];
	        this.status = source["status"];
	        this.note = source["note"];
	        this.name = source["name"];
	    }
	}
	export class RunRef {
	    gateway: string;
	    id: string;
	    stored_id?: string;
	    transport: string;
	    title?: string;
	    tool?: string;
	    status?: string;
	    name?: string;
	
	    static createFrom(source: any = {}) {
	        return new RunRef(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.gateway = source["gateway"];
	        this.id = source["id"];
	        this.stored_id = source["stored_id"];
	        this.transport = source["transport"];
	        this.title = source["title"];
	        this.tool = source["tool"];
	        this.status = source["status"];
	        this.name = source["name"];
	    }
	}
	export class SessionView {
	    gateway: string;
	    id: string;
	    stored_id?: string;
	    title?: string;
	    model?: string;
	    running: boolean;
	    tool?: string;
	    status?: string;
	    last_text?: string;
	    tokens?: number;
	    // Go type: time
	    updated: any;
	    first_prompt?: string;
	    // Go type: time
	    started: any;
	    word?: string;
	    // Go type: time
	    since?: any;
	    name: string;
	    shown_id?: string;
	
	    static createFrom(source: any = {}) {
	        return new SessionView(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.gateway = source["gateway"];
	        this.id = source["id"];
	        this.stored_id = source["stored_id"];
	        this.title = source["title"];
	        this.model = source["model"];
	        this.running = source["running"];
	        this.tool = source["tool"];
	        this.status = source["status"];
	        this.last_text = source["last_text"];
	        this.tokens = source["tokens"];
	        this.updated = this.convertValues(source["updated"], null);
	        this.first_prompt = source["first_prompt"];
	        this.started = this.convertValues(source["started"], null);
	        this.word = source["word"];
	        this.since = this.convertValues(source["since"], null);
	        this.name = source["name"];
	        this.shown_id = source["shown_id"];
	    }
	
		convertValues(a: any, classs: any, asMap: boolean = false): any {
		    if (!a) {
		        return a;
		    }
		    if (a.slice && a.map) {
		        return (a as any[]).map(elem => this.convertValues(elem, classs));
		    } else if ("object" === typeof a) {
		        if (asMap) {
		            for (const key of Object.keys(a)) {
		                a[key] = new classs(a[key]);
		            }
		            return a;
		        }
		        return new classs(a);
		    }
		    return a;
		}
	}
	export class StopResult {
	    gateway: string;
	    id: string;
	    transport: string;
	    outcome: string;
	    message: string;
	
	    static createFrom(source: any = {}) {
	        return new StopResult(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.gateway = source["gateway"];
	        this.id = source["id"];
	        this.transport = source["transport"];
	        this.outcome = source["outcome"];
	        this.message = source["message"];
	    }
	}

}

export namespace source {
	
	export class ChoiceInfo {
	    choice: string;
	    key: string;
	    label: string;
	    description: string;
	    confirm?: boolean;
	    done?: string;
	
	    static createFrom(source: any = {}) {
	        return new ChoiceInfo(source);
	    }
	
	    constructor(source: any = {}) {
	        if ('string' === typeof source) source = JSON.parse(source);
	        this.choice = source["choice"];
	        this.key = source["key"];
	        this.label = source["label"];
	        this.description = source["description"];
	        this.confirm = source["confirm"];
	        this.done = source["done"];
	    }
	}

}

