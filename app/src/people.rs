//! `/people`: an admin manages who may use the hub and what each may do.
//!
//! Everybody is listed with their role, their scope (the whole exchange,
//! or one member system's part) and where their entry came from (the UI
//! users file, an admin, a member's identity provider). An admin adds a
//! person (the hub makes their password and shows it here once), changes
//! a role or a scope, gives a new password, or removes someone. A person
//! from the UI users file is changed in that file, not here. The hub
//! refuses what would leave it without an exchange-wide admin, and closes
//! the open canvases of anyone whose powers changed.

use leptos::prelude::*;

use crate::access::Role;
use crate::api::{self, Method};
use crate::dto::{NewPersonRequest, PasswordIssued, PeopleView, PersonUpdate, PersonView};
use crate::routes;
use crate::session::{require_session, use_hydrated, PageTopBar};

/// What the page knows right now.
#[derive(Debug, Clone, PartialEq)]
enum Loaded {
    Loading,
    People(Vec<PersonView>),
    Failed(String),
}

/// The page's state, shared by its parts.
#[derive(Debug, Clone, Copy)]
struct PeopleCtx {
    loaded: RwSignal<Loaded>,
    /// The last answer worth saying: a refusal, or a password shown once.
    said: RwSignal<Option<Said>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Said {
    Refused(String),
    Password(PasswordIssued),
}

impl PeopleCtx {
    fn reload(self) {
        leptos::task::spawn_local(async move {
            let next = match api::get_json::<PeopleView>(routes::PEOPLE).await {
                Ok(v) => Loaded::People(v.people),
                Err(f) => Loaded::Failed(f.describe()),
            };
            self.loaded.try_set(next);
        });
    }

    /// Sends one change; a refusal is said, a password is shown once.
    fn send<B: serde::Serialize + 'static>(self, method: Method, path: String, body: Option<B>) {
        self.said.set(None);
        leptos::task::spawn_local(async move {
            let answer = api::send_json::<B, serde_json::Value>(method, &path, body.as_ref()).await;
            match answer {
                Ok(Some(v)) => {
                    if let Ok(issued) = serde_json::from_value::<PasswordIssued>(v) {
                        self.said.try_set(Some(Said::Password(issued)));
                    }
                }
                Ok(None) => {}
                Err(f) => {
                    self.said.try_set(Some(Said::Refused(f.describe())));
                }
            }
            self.reload();
        });
    }
}

/// `/people`.
#[component]
pub fn PeoplePage() -> impl IntoView {
    require_session();
    let ctx = PeopleCtx {
        loaded: RwSignal::new(Loaded::Loading),
        said: RwSignal::new(None),
    };
    provide_context(ctx);
    let hydrated = use_hydrated();
    Effect::new(move |_| ctx.reload());
    view! {
        <PageTopBar current=routes::Page::People/>
        <main
            class="people-page"
            data-testid="people-page"
            data-hydrated=move || hydrated.get().to_string()
        >
            <h2>"People"</h2>
            <p class="muted">
                "A viewer reads the map; an operator changes the exchange; an approver decides the inbox; "
                "an admin manages people and credentials. A person bound to one system sees and acts on its part only."
            </p>
            <Said/>
            <AddPerson/>
            {move || match ctx.loaded.get() {
                Loaded::Loading => view! {
                    <p class="muted" role="status">"Loading the people…"</p>
                }
                .into_any(),
                Loaded::Failed(why) => view! {
                    <p class="not-connected" role="alert" data-testid="people-error">
                        "The hub did not answer: " {why}
                    </p>
                }
                .into_any(),
                Loaded::People(people) => {
                    Suspend::new(async move { people_part(people).await }).into_any()
                }
            }}
        </main>
    }
}

/// The table of people and their buttons: a part of the bundle loaded when
/// the list arrives (the canvas never loads it).
#[lazy]
fn people_part(people: Vec<PersonView>) -> AnyView {
    view! {
        <table class="people" data-testid="people">
            <thead>
                <tr>
                    <th>"Username"</th>
                    <th>"Role"</th>
                    <th>"Bound to"</th>
                    <th>"From"</th>
                    <th></th>
                </tr>
            </thead>
            <tbody>
                {people
                    .into_iter()
                    .map(|p| view! { <PersonRow person=p/> })
                    .collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

/// A refusal, or a password shown this once.
#[component]
fn Said() -> impl IntoView {
    let ctx = expect_context::<PeopleCtx>();
    move || {
        match ctx.said.get() {
        None => ().into_any(),
        Some(Said::Refused(why)) => view! {
            <p class="not-connected" role="alert" data-testid="people-refused">{why}</p>
        }
        .into_any(),
        Some(Said::Password(issued)) => view! {
            <section class="drawer-section" role="status" data-testid="people-password">
                <p>{format!("The password of {}, shown this once:", issued.username)}</p>
                <pre class="onboard-token" data-testid="people-password-value">{issued.password}</pre>
            </section>
        }
        .into_any(),
    }
    }
}

/// The role picker of a form.
#[component]
fn RolePicker(role: RwSignal<Role>, #[prop(into)] testid: String) -> impl IntoView {
    view! {
        <select
            data-testid=testid
            on:change=move |ev| {
                if let Some(r) = Role::parse(&event_target_value(&ev)) {
                    role.set(r);
                }
            }
        >
            {Role::ALL
                .into_iter()
                .map(|r| {
                    view! {
                        <option value=r.as_str() selected=move || role.get() == r>
                            {r.as_str()}
                        </option>
                    }
                })
                .collect_view()}
        </select>
    }
}

fn system_of(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The form that adds a person.
#[component]
fn AddPerson() -> impl IntoView {
    let ctx = expect_context::<PeopleCtx>();
    let username = RwSignal::new(String::new());
    let role = RwSignal::new(Role::Viewer);
    let system = RwSignal::new(String::new());
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let body = NewPersonRequest {
            username: username.get_untracked().trim().to_string(),
            role: role.get_untracked(),
            system: system_of(&system.get_untracked()),
        };
        ctx.send(Method::Post, routes::PEOPLE.to_string(), Some(body));
        username.set(String::new());
    };
    view! {
        <form class="people-add" data-testid="people-add" on:submit=submit>
            <label>
                "Username "
                <input
                    data-testid="people-add-username"
                    prop:value=move || username.get()
                    on:input=move |ev| username.set(event_target_value(&ev))
                />
            </label>
            <label>"Role " <RolePicker role testid="people-add-role"/></label>
            <label>
                "Bound to system (empty: the whole exchange) "
                <input
                    data-testid="people-add-system"
                    prop:value=move || system.get()
                    on:input=move |ev| system.set(event_target_value(&ev))
                />
            </label>
            <button type="submit" data-testid="people-add-submit">"Add"</button>
        </form>
    }
}

/// One person, with an admin's controls (none for the file's people).
#[component]
fn PersonRow(person: PersonView) -> impl IntoView {
    let ctx = expect_context::<PeopleCtx>();
    let role = RwSignal::new(person.role);
    let system = RwSignal::new(person.system.clone().unwrap_or_default());
    let name = person.username.clone();
    let from_file = person.origin == "file";
    let (save_name, reset_name, remove_name) = (name.clone(), name.clone(), name.clone());
    let save = move |_| {
        let body = PersonUpdate {
            role: role.get_untracked(),
            system: system_of(&system.get_untracked()),
        };
        ctx.send(Method::Put, routes::person(&save_name), Some(body));
    };
    let reset = move |_| {
        ctx.send::<()>(Method::Post, routes::person_password(&reset_name), None);
    };
    let remove = move |_| {
        ctx.send::<()>(Method::Delete, routes::person(&remove_name), None);
    };
    let bound = person
        .system
        .clone()
        .unwrap_or_else(|| "the exchange".into());
    view! {
        <tr data-testid="person" data-username=name.clone()>
            <td>{name.clone()}</td>
            {if from_file {
                view! {
                    <td>{person.role.as_str()}</td>
                    <td>{bound}</td>
                    <td>"UI users file"</td>
                    <td class="muted">"change it in the file"</td>
                }
                .into_any()
            } else {
                view! {
                    <td><RolePicker role testid="person-role"/></td>
                    <td>
                        <input
                            data-testid="person-system"
                            prop:value=move || system.get()
                            on:input=move |ev| system.set(event_target_value(&ev))
                        />
                    </td>
                    <td>{person.origin.clone()}</td>
                    <td>
                        <button type="button" data-testid="person-save" on:click=save>"Save"</button>
                        <button type="button" data-testid="person-password" on:click=reset>
                            "New password"
                        </button>
                        <button type="button" data-testid="person-remove" on:click=remove>"Remove"</button>
                    </td>
                }
                .into_any()
            }}
        </tr>
    }
}
