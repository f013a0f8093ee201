"""The DQN tutorial's optimize_model (pytorch/tutorials intermediate_source/
reinforcement_q_learning.py) on made-up transitions: the Transition namedtuple and
ReplayMemory's deque, zip(*transitions), the non-final mask from tuple(map(lambda s: s is
not None, ...)) with dtype=torch.bool, torch.cat of the batch, policy_net(state_batch)
.gather(1, action_batch), target_net(...).max(1).values under torch.no_grad(), SmoothL1Loss,
AdamW(amsgrad=True), clip_grad_value_, the soft update of target_net_state_dict with TAU,
and select_action's policy_net(state).max(1).indices.view(1, 1)."""

import math
from collections import deque, namedtuple

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    device = torch.device("cpu")

    Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))

    class ReplayMemory(object):
        def __init__(self, capacity):
            self.memory = deque([], maxlen=capacity)

        def push(self, *args):
            self.memory.append(Transition(*args))

        def __len__(self):
            return len(self.memory)

    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super(DQN, self).__init__()
            self.layer1 = nn.Linear(n_observations, 16)
            self.layer2 = nn.Linear(16, 16)
            self.layer3 = nn.Linear(16, n_actions)

        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)

    BATCH_SIZE, GAMMA, EPS_START, EPS_END, EPS_DECAY, TAU, LR = 6, 0.99, 0.9, 0.05, 1000, 0.005, 1e-3
    n_observations, n_actions = 4, 2
    policy_net = same(DQN(n_observations, n_actions).to(device))
    target_net = DQN(n_observations, n_actions).to(device)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(10000)

    rng = np.random.default_rng(8)
    for i in range(BATCH_SIZE * 3):
        state = torch.tensor(rng.standard_normal(4), dtype=torch.float32, device=device).unsqueeze(0)
        action = torch.tensor([[int(rng.integers(0, 2))]], device=device, dtype=torch.long)
        nxt = None if i % 4 == 3 else torch.tensor(rng.standard_normal(4), dtype=torch.float32).unsqueeze(0)
        reward = torch.tensor([float(rng.standard_normal())], device=device)
        memory.push(state, action, nxt, reward)

    def optimize_model(transitions):
        batch = Transition(*zip(*transitions))
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)),
                                      device=device, dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(BATCH_SIZE, device=device)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        return loss.item()

    steps_done = 0

    def select_action(state):
        nonlocal steps_done
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
        steps_done += 1
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1), eps_threshold

    losses, actions = [], []
    transitions = list(memory.memory)
    for k in range(3):
        losses.append(optimize_model(transitions[k * BATCH_SIZE:(k + 1) * BATCH_SIZE]))
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)
        a, eps = select_action(transitions[k].state)
        actions.append(a.item())
    return {"losses": losses, "actions": actions, "eps": eps, "a": a,
            "target.layer3.weight": target_net.layer3.weight,
            "policy.layer1.weight": policy_net.layer1.weight,
            "exp_avg_sq": optimizer.state[policy_net.layer1.weight]["max_exp_avg_sq"]}
