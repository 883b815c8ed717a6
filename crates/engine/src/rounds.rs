//! Multi-round-trip calls (2026-07-28 `input_required`) for upstreams that ask while they serve.
//!
//! Offload talks to its upstreams on a revision where a server asks its client in the middle of
//! a call, with a request of its own (sampling, elicitation). A client on 2026-07-28 cannot be
//! sent such a request: it gets an `input_required` result carrying the questions instead, and
//! calls again with its answers and the `requestState`. Meanwhile the upstream call stays open
//! here, parked under that state: the client's retry hands the answers to the upstream's waiting
//! requests and waits again, for the call's end or its next question. A client that does not
//! come back within [`PATIENCE`] lets the call go (the upstream's requests fail, the call is
//! cancelled). Nothing of this is stored: only a call's final answer is.
//!
//! The parked calls live in this process: over HTTP with several replicas, a client's retry
//! must reach the replica that answered `input_required` (sticky sessions).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResponse, CallToolResult, InputRequest, InputRequiredResult, InputResponses,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long a parked call waits for its client to come back with answers.
pub const PATIENCE: Duration = Duration::from_secs(600);

/// One question an upstream asks while serving a call, and where its answer goes.
pub struct Ask {
    pub request: InputRequest,
    /// The client's answer, as it sent it (an `ElicitResult`, a `CreateMessageResult`).
    pub reply: oneshot::Sender<Value>,
}

/// Where an upstream's questions go for one call of a 2026-07-28 client.
pub type Asks = mpsc::UnboundedSender<Ask>;

/// A call under way: the task that makes it and the questions it asks.
pub struct Running {
    task: JoinHandle<Answer>,
    asks: mpsc::UnboundedReceiver<Ask>,
    /// Questions sent to the client, by key, awaiting its answers.
    waiting: HashMap<String, oneshot::Sender<Value>>,
    cancel: CancellationToken,
    asked: usize,
}

/// A call's own answer (or the error its request gets).
pub type Answer = Result<CallToolResult, McpError>;

/// What the client gets now.
pub enum Outcome {
    Done(Answer),
    InputRequired(InputRequiredResult),
}

impl Outcome {
    pub fn into_response(self) -> Result<CallToolResponse, McpError> {
        match self {
            Self::Done(answer) => answer.map(CallToolResponse::Complete),
            Self::InputRequired(asked) => Ok(CallToolResponse::InputRequired(asked)),
        }
    }
}

#[derive(Default)]
pub struct Rounds {
    parked: Arc<Mutex<HashMap<String, Running>>>,
}

fn lock(
    m: &Mutex<HashMap<String, Running>>,
) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Rounds {
    /// Starts `call` on a task of its own; `cancel` is the token it obeys, `asks` the receiving
    /// end of the channel its upstream's questions arrive on.
    pub fn start(
        call: impl Future<Output = Answer> + Send + 'static,
        asks: mpsc::UnboundedReceiver<Ask>,
        cancel: CancellationToken,
    ) -> Running {
        Running {
            task: tokio::spawn(call),
            asks,
            waiting: HashMap::new(),
            cancel,
            asked: 0,
        }
    }

    /// The call parked under `state`, with the client's `answers` handed to the questions they
    /// answer (a question left unanswered fails upstream). `None`: no such call (answered
    /// already, given up on, or parked in another process).
    pub fn resume(&self, state: &str, answers: InputResponses) -> Option<Running> {
        let mut running = lock(&self.parked).remove(state)?;
        for (key, answer) in answers {
            if let Some(reply) = running.waiting.remove(&key) {
                let _ = reply.send(answer);
            }
        }
        running.waiting.clear();
        Some(running)
    }

    /// Waits for the call's answer or its next questions; questions park the call.
    pub async fn wait(&self, mut running: Running, cancelled: CancellationToken) -> Outcome {
        let first = tokio::select! {
            done = &mut running.task => return Outcome::Done(finished(done)),
            () = cancelled.cancelled() => {
                running.cancel.cancel();
                return Outcome::Done(finished((&mut running.task).await));
            }
            ask = running.asks.recv() => match ask {
                Some(ask) => ask,
                None => return Outcome::Done(finished((&mut running.task).await)),
            },
        };
        let mut questions = BTreeMap::new();
        let mut add = |running: &mut Running, ask: Ask| {
            running.asked += 1;
            let key = format!("offload-{}", running.asked);
            questions.insert(key.clone(), ask.request);
            running.waiting.insert(key, ask.reply);
        };
        add(&mut running, first);
        // Questions asked together go out together.
        tokio::time::sleep(Duration::from_millis(20)).await;
        while let Ok(ask) = running.asks.try_recv() {
            add(&mut running, ask);
        }
        let state = token();
        self.park(state.clone(), running);
        Outcome::InputRequired(InputRequiredResult::new(Some(questions), Some(state)))
    }

    fn park(&self, state: String, running: Running) {
        lock(&self.parked).insert(state.clone(), running);
        let parked = Arc::downgrade(&self.parked);
        tokio::spawn(async move {
            tokio::time::sleep(PATIENCE).await;
            let Some(parked) = parked.upgrade() else {
                return;
            };
            let given_up = lock(&parked).remove(&state);
            if let Some(running) = given_up {
                tracing::info!("a call waited {PATIENCE:?} for its client's answers; let go");
                running.cancel.cancel();
                running.task.abort();
            }
        });
    }

    /// How many calls wait for their clients' answers.
    #[cfg(test)]
    pub fn parked(&self) -> usize {
        lock(&self.parked).len()
    }
}

fn finished(done: Result<Answer, tokio::task::JoinError>) -> Answer {
    done.unwrap_or_else(|e| {
        Err(McpError::internal_error(
            format!("the call ended unexpectedly: {e}"),
            None,
        ))
    })
}

/// An unguessable state for a parked call (a client can only resume its own).
fn token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS has randomness");
    hex::encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elicit(message: &str) -> InputRequest {
        let params: rmcp::model::ElicitRequestParams = serde_json::from_value(serde_json::json!({
            "message": message,
            "requestedSchema": {"type": "object", "properties": {}}
        }))
        .unwrap();
        InputRequest::Elicitation(rmcp::model::ElicitRequest::new(params))
    }

    #[tokio::test]
    async fn questions_park_the_call_and_answers_resume_it() {
        let rounds = Rounds::default();
        let (tx, rx) = mpsc::unbounded_channel();
        let running = Rounds::start(
            async move {
                let (reply, answer) = oneshot::channel();
                tx.send(Ask {
                    request: elicit("name?"),
                    reply,
                })
                .unwrap();
                let name = answer.await.unwrap();
                Ok(CallToolResult::success(vec![
                    rmcp::model::ContentBlock::text(name.to_string()),
                ]))
            },
            rx,
            CancellationToken::new(),
        );
        let Outcome::InputRequired(asked) = rounds.wait(running, CancellationToken::new()).await
        else {
            panic!("a question expected")
        };
        assert_eq!(rounds.parked(), 1);
        let state = asked.request_state.clone().unwrap();
        let (key, _) = asked.input_requests.unwrap().into_iter().next().unwrap();
        assert!(
            rounds
                .resume("not-the-state", InputResponses::new())
                .is_none()
        );
        let running = rounds
            .resume(&state, [(key, Value::from("Ada"))].into_iter().collect())
            .unwrap();
        assert_eq!(rounds.parked(), 0);
        let Outcome::Done(Ok(result)) = rounds.wait(running, CancellationToken::new()).await else {
            panic!("the answer expected")
        };
        assert_eq!(result.content[0].as_text().unwrap().text, "\"Ada\"");
        assert!(
            rounds.resume(&state, InputResponses::new()).is_none(),
            "once only"
        );
    }
}
