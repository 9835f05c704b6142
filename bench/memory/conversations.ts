/**
 * A scripted multi-session conversation set with known evidence: 40 facts (a person doing
 * something in a domain), five turns each, spread over 8 sessions of one user, and two questions
 * per fact (one sharing words with the evidence, one paraphrased). Deterministic: the same set on every run.
 */
export interface Turn {
  session: number;
  fact: number;
  user: string;
  agent: string;
}

export interface Question {
  fact: number;
  text: string;
  kind: "lexical" | "paraphrase";
}

const people = [
  "my sister Clara",
  "my neighbour Tom",
  "my boss Priya",
  "my friend Diego",
  "my uncle Henrik",
  "my colleague Mei",
  "my cousin Aisha",
  "my landlord Victor",
  "my coach Sandra",
  "my son Leo",
];

interface Domain {
  name: string;
  lines: ((who: string, n: number) => [string, string])[];
  question: (who: string) => string;
  /** The same question in other words: what lexical (hash) embeddings find hard. */
  paraphrase: (who: string) => string;
}

const domains: Domain[] = [
  {
    name: "garden",
    lines: [
      (w, n) => [
        `${w} planted ${n} tomato seedlings in the greenhouse.`,
        `Nice, ${n} tomato seedlings is a good start.`,
      ],
      (w) => [
        `${w} uses homemade compost from kitchen scraps.`,
        "Compost from kitchen scraps feeds tomatoes well.",
      ],
      (w) => [
        `The greenhouse of ${w} gets too hot in July.`,
        "Shade cloth keeps a greenhouse cooler in July.",
      ],
      (w) => [
        `${w} waters the tomatoes every second morning.`,
        "Morning watering avoids leaf mildew.",
      ],
      (w) => [
        `${w} wants to try heirloom tomato varieties next spring.`,
        "Heirloom tomatoes have great flavour.",
      ],
    ],
    question: (w) => `How many tomato seedlings did ${w} plant in the greenhouse?`,
    paraphrase: (w) => `What vegetables is ${w} growing at home?`,
  },
  {
    name: "travel",
    lines: [
      (w, n) => [
        `${w} booked a flight to Lisbon for ${n} euros.`,
        `A flight to Lisbon for ${n} euros is a fair price.`,
      ],
      (w) => [
        `${w} will stay in a small hotel in the Alfama district.`,
        "Alfama is full of steep alleys and fado bars.",
      ],
      (w) => [`${w} wants to take the tram 28 across Lisbon.`, "Tram 28 gets crowded, go early."],
      (w) => [
        `${w} is worried about the Lisbon airport transfer.`,
        "The metro red line runs from the airport to the centre.",
      ],
      (w) => [
        `${w} plans a day trip from Lisbon to Sintra palaces.`,
        "Sintra palaces are best visited on weekdays.",
      ],
    ],
    question: (w) => `What did ${w} pay for the flight to Lisbon?`,
    paraphrase: (w) => `Where is ${w} going on holiday?`,
  },
  {
    name: "fitness",
    lines: [
      (w, n) => [
        `${w} is training for a marathon and ran ${n} kilometres this week.`,
        `${n} kilometres a week is solid marathon training.`,
      ],
      (w) => [
        `${w} has knee pain after long runs.`,
        "Knee pain after long runs can come from worn running shoes.",
      ],
      (w) => [
        `${w} bought new running shoes with more cushioning.`,
        "Cushioned running shoes help on long runs.",
      ],
      (w) => [
        `${w} does interval sessions on the track on Tuesdays.`,
        "Track intervals build marathon speed.",
      ],
      (w) => [
        `${w} eats pasta the night before the long run.`,
        "Carbohydrates before a long run are sensible.",
      ],
    ],
    question: (w) => `How far did ${w} run this week for the marathon training?`,
    paraphrase: (w) => `Which race is ${w} preparing for?`,
  },
  {
    name: "money",
    lines: [
      (w, n) => [
        `${w} owes ${n} dollars in quarterly tax as a freelancer.`,
        `Quarterly tax of ${n} dollars should be set aside early.`,
      ],
      (w) => [
        `${w} keeps receipts for the home office deduction.`,
        "Home office receipts support the deduction.",
      ],
      (w) => [
        `${w} opened a separate savings account for taxes.`,
        "A separate tax savings account avoids surprises.",
      ],
      (w) => [
        `${w} asked an accountant about invoice deadlines.`,
        "Accountants can set up invoice reminders.",
      ],
      (w) => [
        `${w} wants to invest the tax refund in index funds.`,
        "Index funds are a low-cost choice.",
      ],
    ],
    question: (w) => `How much quarterly tax does ${w} owe as a freelancer?`,
    paraphrase: (w) => `What does ${w} have to pay the government?`,
  },
];

export function generateConversations(): { turns: Turn[]; questions: Question[] } {
  const facts: { who: string; domain: Domain; n: number }[] = [];
  for (let p = 0; p < people.length; p++) {
    for (let d = 0; d < domains.length; d++) {
      facts.push({ who: people[p], domain: domains[d], n: 10 + ((p * 37 + d * 11) % 90) });
    }
  }
  // Shuffle deterministically so one session mixes people and domains.
  const order = facts.map((_, i) => i).sort((a, b) => ((a * 7919) % 41) - ((b * 7919) % 41));
  const turns: Turn[] = [];
  order.forEach((factIndex, position) => {
    const { who, domain, n } = facts[factIndex];
    for (const line of domain.lines) {
      const [user, agent] = line(who, n);
      turns.push({
        session: Math.floor(position / 5),
        fact: factIndex,
        user: capitalise(user),
        agent,
      });
    }
  });
  const questions: Question[] = facts.flatMap((f, fact) => [
    { fact, text: f.domain.question(f.who), kind: "lexical" as const },
    { fact, text: f.domain.paraphrase(f.who), kind: "paraphrase" as const },
  ]);
  return { turns, questions };
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
