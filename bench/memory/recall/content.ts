/**
 * The text bank of the recall benchmark: chat lines by topic and the fact templates the
 * questions are written from. Written for this benchmark; no public dataset is used.
 *
 * Every question is phrased with other words or other word forms than its evidence, and every
 * fact has decoy lines that share the question's words but not the answer: the words of a
 * question lead a lexical search to the decoys as often as to the evidence.
 */
export const TOPICS = [
  "running",
  "food",
  "home",
  "work",
  "family",
  "travel",
  "pets",
  "health",
] as const;
export type Topic = (typeof TOPICS)[number];

/** {city}, {dish}, {day}, {n} and {friend} are filled at random, so lines rarely repeat exactly. */
export const USER_LINES: Record<Topic, string[]> = {
  running: [
    "Did an easy {n}k this morning, the park was full of dogs.",
    "My calves are tight after yesterday's hill repeats.",
    "Thinking of joining the Thursday running club, {friend} says they're friendly.",
    "It was raining so I did intervals on the treadmill instead, so boring.",
    "New shoes arrived, they feel bouncy but a bit narrow.",
    "I keep skipping stretching and then wondering why my hips hurt.",
    "The race calendar for next year is out, so many options.",
    "Ran along the river on {day}, saw the rowers training.",
    "My watch says my resting heart rate dropped, which is nice.",
    "Long run on {day} felt awful for the first {n} kilometres.",
  ],
  food: [
    "Tried making {dish} tonight, it was edible at least.",
    "I'm so tired of cooking every evening, we ordered takeaway again.",
    "The market had amazing tomatoes today, bought way too many.",
    "{friend} brought over homemade bread on {day}, still warm.",
    "I burned the onions again, the whole flat smells of it.",
    "Meal prepping on Sundays is the only thing keeping me sane.",
    "We found a tiny place that does great {dish} near the station.",
    "I want to cook more vegetarian dinners, any easy ideas?",
    "The new cookbook is beautiful but every recipe takes three hours.",
    "Made a huge pot of {dish}, we'll be eating it all week.",
  ],
  home: [
    "The kitchen tap is dripping again, I need to call someone.",
    "Spent {day} sorting out the hallway cupboard, found so much junk.",
    "Our upstairs neighbours were moving furniture until midnight.",
    "I'd love a bigger flat but rents around here are ridiculous.",
    "The balcony plants are looking sad, too much sun I think.",
    "We finally hung the pictures in the living room, took {n} attempts.",
    "The heating makes a clanking noise every morning at six.",
    "Bought a new rug and now the sofa looks shabby next to it.",
    "Cleaning the windows is the most thankless job in the world.",
    "The landlord still hasn't answered about the damp patch.",
  ],
  work: [
    "Back-to-back meetings all day, I got nothing actually done.",
    "My team lead wants the report by {day}, which is tight.",
    "{friend} from the office is leaving, there's a farewell lunch.",
    "I'm trying to block my mornings for focused work.",
    "The new project tool is confusing everyone, including me.",
    "Had my quarterly review, it went fine I think.",
    "Working from home on {day}, the quiet is lovely.",
    "The client changed the requirements for the {n}th time.",
    "I volunteered to give a talk at the team meeting, slightly regretting it.",
    "The office coffee machine is broken and morale has collapsed.",
  ],
  family: [
    "Called my mum on {day}, she talked about the garden for an hour.",
    "My dad is learning to use his new phone, lots of calls about it.",
    "Family dinner on {day} was loud but nice.",
    "My nephew turned {n} and is suddenly obsessed with dinosaurs.",
    "We're trying to plan a family weekend but nobody agrees on dates.",
    "{friend} and I were talking about how our parents are getting older.",
    "My grandmother sent a postcard, her handwriting is still perfect.",
    "The family group chat is chaos again, {n} messages since lunch.",
    "I should visit my parents more often, it's been weeks.",
    "My cousins are arguing about who hosts next year.",
  ],
  travel: [
    "Looking at trains to {city} for a long weekend.",
    "Flights are so expensive right now, maybe we'll just stay home.",
    "{friend} just got back from {city} and won't stop talking about it.",
    "I always overpack, {n} pairs of shoes for a weekend is too many.",
    "We had a layover in {city} once and only saw the airport.",
    "My passport expires next year, I should renew it early.",
    "Thinking about a road trip in the spring, nothing booked yet.",
    "The hotel in {city} had the smallest room I've ever seen.",
    "I love night trains, even if I never sleep on them.",
    "Someone at work recommended {city} for a cheap city break.",
  ],
  pets: [
    "The dog next door barked all through my call on {day}.",
    "{friend}'s cat knocked a glass off the table again.",
    "Sometimes I think about getting a pet but our flat is tiny.",
    "Saw a hedgehog in the garden last night, it was adorable.",
    "The vet bills some people pay are insane.",
    "A stray cat keeps visiting our balcony, I've named it in my head.",
    "Dog walkers in the park have their own little social club.",
    "{friend} is pet-sitting a parrot that only says hello.",
    "I'm allergic-ish to some cats, it depends on the cat.",
    "The pet shop on the corner closed, which is sad.",
  ],
  health: [
    "Slept badly again, maybe {n} hours.",
    "Trying to drink more water, I keep forgetting.",
    "My back is stiff from the office chair.",
    "I booked a check-up, it's been ages since the last one.",
    "Started doing ten minutes of yoga in the mornings.",
    "Had a headache all afternoon on {day}, probably the screen.",
    "I've been cutting down on coffee, it's going badly.",
    "My eyes get tired in the evenings, maybe I need glasses.",
    "A cold is going around the office, I hope I dodge it.",
    "Walking to work instead of the bus has helped my mood.",
  ],
};

export const AGENT_LINES: Record<Topic, string[]> = {
  running: [
    "Easy runs count too, consistency matters more than pace.",
    "Foam rolling the calves tonight might help with the tightness.",
    "A running club could be a good way to stay motivated.",
    "Treadmill intervals are dull but they do the job.",
    "Give the new shoes a few short runs before a long one.",
  ],
  food: [
    "Simple one-pot dinners might take the pressure off weeknights.",
    "Sounds tasty, leftovers are underrated.",
    "Batch cooking on the weekend really does save time.",
    "A sheet-pan dinner with roasted vegetables is an easy start.",
    "Nothing wrong with takeaway after a long day.",
  ],
  home: [
    "A dripping tap is usually just a worn washer.",
    "Decluttering one cupboard at a time is very satisfying.",
    "It might be worth putting the landlord request in writing.",
    "Small changes like a rug can really change a room.",
    "Noisy neighbours are exhausting, I hope they settle soon.",
  ],
  work: [
    "Blocking focus time in the calendar is a great idea.",
    "Tight deadlines are stressful, maybe break the report into parts.",
    "It sounds like a draining day, try to switch off tonight.",
    "Changing requirements are frustrating, it might help to write them down.",
    "A talk is a good chance to be visible, you'll do fine.",
  ],
  family: [
    "It sounds like your mum enjoyed the chat.",
    "Family planning by group chat is always chaotic.",
    "Visiting when you can is what counts.",
    "Dinosaur phases are the best, enjoy it.",
    "Loud family dinners are often the good ones.",
  ],
  travel: [
    "Trains are often a relaxed way to travel for a long weekend.",
    "Booking early usually helps with prices.",
    "Packing lists help with the overpacking, I find.",
    "A spring road trip sounds lovely, there's time to plan.",
    "Renewing a passport early is wise, it can take weeks.",
  ],
  pets: [
    "Pets are lovely but a lot of work in a small flat.",
    "Hedgehogs in the garden are a good sign.",
    "Maybe the stray will adopt you eventually.",
    "Pet-sitting is a good way to test whether a pet suits you.",
    "Vet costs can really add up, insurance helps some people.",
  ],
  health: [
    "Sleep is hard to fix quickly, a steady bedtime can help.",
    "A check-up now and then is a good habit.",
    "Short daily yoga sessions add up over time.",
    "Screen breaks might help with the headaches.",
    "Walking to work sounds like a nice change.",
  ],
};

/** A second sentence for some chat lines, so turns vary in length. */
export const FOLLOW_UPS = [
  "Anyway, long week.",
  "Not sure why I'm telling you this.",
  "We'll see how it goes.",
  "Honestly it's been that kind of month.",
  "Anyway, how's your day been?",
  "I'll keep you posted.",
  "Probably overthinking it.",
  "That's the news from here.",
];

export const AGENT_FOLLOW_UPS = [
  "How are you feeling about it?",
  "Let me know how it goes.",
  "Want me to note anything down?",
  "That sounds like a lot.",
  "Fingers crossed for you.",
];

export const FILL = {
  city: ["Vienna", "Seville", "Bruges", "Naples", "Oslo", "Lisbon", "Prague", "Bilbao", "Riga"],
  dish: ["shakshuka", "dal", "risotto", "ramen", "paella", "goulash", "pad thai", "minestrone"],
  day: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
  friend: ["Sam", "Lena", "Omar", "Kasia", "Ravi", "Julia", "Nico", "Aoife"],
};

/**
 * A fact stated once and asked with other words. `say` is the evidence turn; `decoys` are lines
 * that share the question's words but not the answer.
 */
export interface FactTemplate {
  topic: Topic;
  values: string[];
  say: (value: string) => string;
  ask: string;
  decoys: string[];
}

/** Single-hop: the question paraphrases the evidence and changes its word forms. */
export const SINGLE_HOP: FactTemplate[] = [
  {
    topic: "running",
    values: ["1:58:40", "2:04:12", "1:49:55"],
    say: (v) => `Finished the half marathon in ${v}, my legs are still complaining.`,
    ask: "What was my finishing time when I completed the 21 km race?",
    decoys: [
      "I need more time to train before I race again.",
      "What time does the race start on Sunday, do you know?",
    ],
  },
  {
    topic: "home",
    values: ["sage green", "dusty blue", "terracotta"],
    say: (v) => `We're repainting the nursery ${v} because the old beige felt gloomy.`,
    ask: "What colour did we pick to paint the baby's bedroom?",
    decoys: [
      "The baby's bedroom still needs curtains before winter.",
      "Picking a colour for anything is impossible for us.",
    ],
  },
  {
    topic: "health",
    values: ["meniscus", "hamstring", "Achilles tendon"],
    say: (v) => `My physio thinks the knee trouble is a torn ${v}, so no jogging for a while.`,
    ask: "What injury did the physiotherapist diagnose me with?",
    decoys: [
      "Injury prevention is all about warm-ups, apparently.",
      "My physiotherapist's clinic moved to a new building.",
    ],
  },
  {
    topic: "travel",
    values: ["Lake Bohinj", "the Dolomites", "Cape Cornwall"],
    say: (v) => `Booked a cabin at ${v} for our anniversary, hoping the weather holds.`,
    ask: "Where are we staying to celebrate another year of being married?",
    decoys: [
      "Being married means never winning the thermostat argument.",
      "We're staying in this weekend to celebrate doing nothing.",
    ],
  },
  {
    topic: "food",
    values: ["pierogi", "baklava", "gnocchi"],
    say: (v) => `I'm learning to make ${v} from my grandmother's handwritten recipe cards.`,
    ask: "Which dish am I studying from my gran's recipes?",
    decoys: [
      "Recipes online are all life stories before the ingredients.",
      "Which dish should I bring to the potluck, any idea?",
    ],
  },
  {
    topic: "home",
    values: ["80 euros", "120 euros", "65 euros"],
    say: (v) => `The landlord finally agreed to knock ${v} off the rent after the damp saga.`,
    ask: "By how much did my monthly housing payment get reduced?",
    decoys: [
      "Housing prices in this city keep going up every month.",
      "My monthly budget spreadsheet is a mess.",
    ],
  },
  {
    topic: "work",
    values: ["Data Summit Vienna", "PyCon Italia", "the Nordic Design Week"],
    say: (v) => `My manager is sending me to ${v} in the spring, all expenses covered.`,
    ask: "Which conference is my boss paying for me to attend?",
    decoys: [
      "My boss is paying for team lunch on Friday, a miracle.",
      "Conference calls with six people talking at once are the worst.",
    ],
  },
  {
    topic: "home",
    values: ["lavender", "climbing roses", "rosemary bushes"],
    say: (v) => `Planted ${v} along the back fence, let's hope they survive the frost.`,
    ask: "What have I been planting by the rear wall of the garden?",
    decoys: [
      "The garden wall needs repointing, the mortar is crumbling.",
      "Planting anything in this clay soil is a fight.",
    ],
  },
  {
    topic: "pets",
    values: ["Frida", "Biscuit", "Miso"],
    say: (v) => `We named the kitten ${v}, she already rules the flat.`,
    ask: "What's the name of our new cat?",
    decoys: [
      "Our new neighbours have a cat that sits on our car.",
      "What's the name of that cat food brand you mentioned?",
    ],
  },
  {
    topic: "work",
    values: ["Triodos", "a credit union", "an online savings bank"],
    say: (v) => `I moved my savings over to ${v} because the interest was better.`,
    ask: "Which bank do I keep my nest egg with now?",
    decoys: [
      "The bank app logged me out again in the middle of a transfer.",
      "I keep telling myself to build a nest egg, one day.",
    ],
  },
  {
    topic: "family",
    values: ["Montreal", "Cape Town", "Singapore"],
    say: (v) => `My sister is flying in from ${v} for the holidays, I can't wait.`,
    ask: "Where is my sibling travelling from for Christmas?",
    decoys: [
      "Christmas travelling is chaos every single year.",
      "My sibling group chat only wakes up for birthdays.",
    ],
  },
  {
    topic: "health",
    values: ["sugar", "alcohol", "caffeine after noon"],
    say: (v) => `I've cut out ${v} completely since the doctor's warning about my blood tests.`,
    ask: "What have I been cutting out since my GP warned me?",
    decoys: [
      "My GP is always running late, I waited forty minutes.",
      "I keep cutting corners on sleep since work got busy.",
    ],
  },
  {
    topic: "family",
    values: ["cello", "clarinet", "drum kit"],
    say: (v) => `My daughter's teacher recommended she switch to the ${v}.`,
    ask: "Which instrument did my kid's music teacher suggest?",
    decoys: [
      "The kids' music school has a concert next month.",
      "My teacher friends all suggest the same summer camp.",
    ],
  },
  {
    topic: "running",
    values: ["a sub-50 10k", "a 5k under 22 minutes", "a marathon before I turn 40"],
    say: (v) => `My big goal for next year is ${v}, I've written it on the fridge.`,
    ask: "What running target did I set myself for the coming year?",
    decoys: [
      "Setting goals is easy, keeping them is the hard part.",
      "The coming year already looks busy at work.",
    ],
  },
  {
    topic: "travel",
    values: [
      "a Lonely Planet for Georgia",
      "the Rough Guide to Sicily",
      "a cycling map of Jutland",
    ],
    say: (v) => `Picked up ${v} at the second-hand bookshop, now I really have to go.`,
    ask: "Which guidebook did I buy from the used book store?",
    decoys: [
      "The used book store smells exactly like my school library.",
      "I bought so many books this year that I'll never read.",
    ],
  },
  {
    topic: "pets",
    values: ["chicken and rice", "a grain-free salmon mix", "wet food twice a day"],
    say: (v) => `The vet put the dog on ${v} until her stomach settles.`,
    ask: "What diet is our dog eating on the vet's orders?",
    decoys: [
      "Our dog is eating grass again, no idea why.",
      "The vet's orders are never as simple as they sound.",
    ],
  },
];

/** Mentioned in passing: the fact is an aside in a turn about something else. */
export const PASSING: FactTemplate[] = [
  {
    topic: "food",
    values: ["chestnut honey", "quince jam", "smoked paprika"],
    say: (v) =>
      `Made the lentil soup again tonight with too much cumin as usual, oh and the neighbour dropped off some ${v} from her holiday.`,
    ask: "What did the neighbour bring back from her trip for me?",
    decoys: [
      "The neighbour's kids are back from their trip and very loud.",
      "I should bring something back for the neighbour from our trip.",
    ],
  },
  {
    topic: "running",
    values: ["a red fox", "a heron", "two deer"],
    say: (v) =>
      `Tempo run felt fine until the last kilometre, and I spotted ${v} by the canal, then my lungs gave up.`,
    ask: "Which animal did I see near the water while running?",
    decoys: [
      "Running near the water is so much nicer than the road.",
      "I saw someone running with a dog near the canal, very cute.",
    ],
  },
  {
    topic: "work",
    values: ["Harriet", "Marcus", "Yuki"],
    say: (v) =>
      `The sprint review dragged on, the demo broke twice, ${v} from legal sat in for some reason, and then we ran out of time.`,
    ask: "Who from the legal department joined our sprint review?",
    decoys: [
      "Legal joined the meeting late and asked about the contracts.",
      "The sprint review is now on Thursdays, which suits me.",
    ],
  },
  {
    topic: "home",
    values: ["a Makita drill", "a wet vacuum", "a tile cutter"],
    say: (v) =>
      `Spent the whole Saturday on the bathroom, my neighbour lent us ${v}, and the grout is still not right.`,
    ask: "What tool did my neighbour loan us?",
    decoys: [
      "My neighbour loaned us his ladder last year and never asked for it back.",
      "We need a proper tool box, everything is in a plastic bag.",
    ],
  },
  {
    topic: "travel",
    values: ["gate B42", "seat 17C", "the last row"],
    say: (v) =>
      `The airport was chaos, security took an hour, I ended up at ${v} next to a crying toddler, and the coffee was awful.`,
    ask: "Where was I seated on that chaotic flight with the crying toddler?",
    decoys: [
      "Flights with toddlers must be exhausting for the parents.",
      "I was seated next to someone eating tuna on a flight once.",
    ],
  },
  {
    topic: "family",
    values: ["a rubber duck", "a bag of marbles", "his grandad's compass"],
    say: (v) =>
      `My nephew's birthday party was a sugar-fuelled riot, he hid ${v} in my coat pocket, and the cake collapsed.`,
    ask: "What did my nephew sneak into my jacket at his party?",
    decoys: [
      "My nephew's party had a bouncy castle this year.",
      "I need a new jacket, the zip on this one is broken.",
    ],
  },
  {
    topic: "health",
    values: ["magnesium", "vitamin D", "iron tablets"],
    say: (v) =>
      `The appointment was mostly waiting room boredom, the nurse suggested ${v}, and then I forgot to ask about my back.`,
    ask: "Which supplement did the nurse recommend?",
    decoys: [
      "The nurse at the clinic recommended a different pharmacy.",
      "Supplements are such a confusing market.",
    ],
  },
  {
    topic: "pets",
    values: ["Pickle", "Bramble", "Captain"],
    say: (v) =>
      `Dog-sat for the neighbours over the weekend, their terrier ${v} stole a whole sausage, and I barely slept.`,
    ask: "What was the name of the terrier I looked after?",
    decoys: [
      "I looked after the neighbours' plants while they were away.",
      "Terriers are stubborn little dogs, everyone says so.",
    ],
  },
  {
    topic: "food",
    values: ["Osteria Lupa", "Bistro Marlowe", "Casa Nomad"],
    say: (v) =>
      `Long day, skipped the gym, ended up at ${v} with the team, and I ate way too much bread before the mains.`,
    ask: "Which restaurant did I eat at with my colleagues?",
    decoys: [
      "My colleagues keep suggesting the same restaurant every Friday.",
      "I ate lunch at my desk again with colleagues all around me.",
    ],
  },
  {
    topic: "work",
    values: ["a standing desk", "a second monitor", "noise-cancelling headphones"],
    say: (v) =>
      `Quarter close is brutal, finance wants numbers by Friday, IT finally approved ${v} for me, and my inbox is a wreck.`,
    ask: "What equipment did the IT department sign off on for me?",
    decoys: [
      "IT signed off early today, nobody answered the helpdesk.",
      "The equipment room at the office is a mess of old cables.",
    ],
  },
  {
    topic: "home",
    values: ["a 1970s armchair", "an old sewing machine", "a box of vinyl records"],
    say: (v) =>
      `Cleared out the cellar with my brother, found ${v} under a tarp, and filled six bags for the tip.`,
    ask: "What did we discover in the basement while clearing it?",
    decoys: [
      "The basement smells damp again after the rain.",
      "Clearing out old stuff always takes twice as long as I think.",
    ],
  },
  {
    topic: "travel",
    values: ["a tram pass", "my reading glasses", "a scarf"],
    say: (v) =>
      `The weekend away was lovely but rushed, I left ${v} in the hotel room, and the train home was packed.`,
    ask: "What did I forget at the hotel?",
    decoys: [
      "I always forget something at a hotel, usually a charger.",
      "The hotel breakfast was the highlight, honestly.",
    ],
  },
  {
    topic: "running",
    values: ["a foil blanket", "a medal shaped like a pretzel", "a finisher's beanie"],
    say: (v) =>
      `Parkrun was freezing, I paced my friend for once, the volunteers handed out ${v} at the end, and we went for pancakes.`,
    ask: "What were the volunteers giving out after the run?",
    decoys: [
      "I should volunteer at the run one Saturday, they're always short.",
      "After the run I was giving out advice nobody asked for.",
    ],
  },
  {
    topic: "family",
    values: ["a cruise to Norway", "a tandem bicycle", "ballroom dancing lessons"],
    say: (v) =>
      `Sunday lunch at my parents' was the usual, dad grilled too much, mum announced they've booked ${v}, and we argued about politics.`,
    ask: "What have my parents booked for themselves?",
    decoys: [
      "My parents booked the same holiday cottage they always book.",
      "My parents have booked me for babysitting duty again.",
    ],
  },
  {
    topic: "health",
    values: ["a mouthguard", "a softer pillow", "a white noise app"],
    say: (v) =>
      `Sleep was bad again, woke at four, the dentist says I grind my teeth and suggested ${v}, then work was a blur.`,
    ask: "What did the dentist propose for my teeth grinding?",
    decoys: [
      "The dentist proposed moving my appointment to next month.",
      "Grinding through the workday on no sleep is awful.",
    ],
  },
  {
    topic: "pets",
    values: ["a harness with a bell", "a catio", "a scratching tower"],
    say: (v) =>
      `Cat chaos this week, she threw up on the rug, knocked the plant over, and we ordered ${v} which she will probably ignore.`,
    ask: "What did we order for the cat?",
    decoys: [
      "We ordered cat litter in bulk, the box is enormous.",
      "The cat ignores every toy we've ever ordered for her.",
    ],
  },
];

/**
 * Temporal facts: `inText` ones carry their date in the words ("on March 14"), the others are
 * answered by the evidence turn's own timestamp.
 */
export interface TemporalTemplate {
  topic: Topic;
  inText: boolean;
  say: (date: string) => string;
  ask: string;
  decoys: string[];
}

export const TEMPORAL: TemporalTemplate[] = [
  {
    topic: "health",
    inText: false,
    say: () => "Just back from the dentist, the crown is finally in and my jaw is numb.",
    ask: "When did I get my dental crown fitted?",
    decoys: ["My dental appointment next month is just a cleaning, nothing fitted."],
  },
  {
    topic: "travel",
    inText: false,
    say: () => "I passed my driving test this morning, on the second attempt!",
    ask: "When did I get my driver's licence?",
    decoys: ["Driving lessons are so expensive, I did the maths for my licence."],
  },
  {
    topic: "work",
    inText: false,
    say: () => "Handed in my notice today, my last day will be in four weeks.",
    ask: "When did I resign from my job?",
    decoys: ["Half my team talks about resigning from this job every week."],
  },
  {
    topic: "home",
    inText: false,
    say: () => "The keys to the new flat are in my hand, we officially live here now.",
    ask: "When did we move into our new apartment?",
    decoys: ["Moving into a new apartment is the most stressful thing ever."],
  },
  {
    topic: "pets",
    inText: false,
    say: () => "We brought the puppy home from the breeder an hour ago, she's asleep on my foot.",
    ask: "When did we get our dog?",
    decoys: ["When we get a dog it'll need a garden, we've decided."],
  },
  {
    topic: "running",
    inText: false,
    say: () => "I've signed up for the spring marathon, entry confirmed, no backing out.",
    ask: "When did I register for the marathon?",
    decoys: ["Registration for the autumn marathon opens in a few weeks, apparently."],
  },
  {
    topic: "family",
    inText: false,
    say: () => "My brother just proposed to his girlfriend at the lake, she said yes!",
    ask: "When did my brother get engaged?",
    decoys: ["My brother keeps saying he'll never get engaged, we'll see."],
  },
  {
    topic: "food",
    inText: false,
    say: () => "Baked my very first sourdough loaf today and it actually rose.",
    ask: "When did I make my first loaf of sourdough bread?",
    decoys: ["Sourdough bread from the bakery costs a fortune now."],
  },
  {
    topic: "home",
    inText: true,
    say: (d) => `The new sofa gets delivered on ${d}, so the living room is a mess until then.`,
    ask: "When is the couch supposed to arrive?",
    decoys: ["The couch cushions need replacing, they're completely flat."],
  },
  {
    topic: "health",
    inText: true,
    say: (d) => `The surgeon scheduled my knee operation for ${d}, I'm nervous already.`,
    ask: "When is my knee surgery planned?",
    decoys: ["Knee surgery recovery takes months, my uncle says."],
  },
  {
    topic: "work",
    inText: true,
    say: (d) => `The product launch was pushed to ${d}, so my holiday is cancelled.`,
    ask: "When are we launching the product now?",
    decoys: ["We're launching a new product every quarter, it's exhausting."],
  },
  {
    topic: "family",
    inText: true,
    say: (d) => `My parents' fortieth anniversary party is on ${d}, we're renting a hall.`,
    ask: "When is the celebration of my parents' 40 years of marriage?",
    decoys: ["My parents' marriage advice is always 'never go to bed angry'."],
  },
  {
    topic: "travel",
    inText: true,
    say: (d) => `Our flight to Japan leaves on ${d}, I've started a packing list already.`,
    ask: "When do we fly out to Japan?",
    decoys: ["Flying to Japan is on my bucket list, maybe one day."],
  },
  {
    topic: "pets",
    inText: true,
    say: (d) => `The cat's vaccination booster is due on ${d}, I set a reminder.`,
    ask: "When does our cat need her next vaccine shot?",
    decoys: ["Our cat hates the vet, the next shot will be a battle."],
  },
  {
    topic: "running",
    inText: true,
    say: (d) => `The trail race I entered is on ${d}, thirty kilometres of mud.`,
    ask: "When is the off-road race I signed up for?",
    decoys: ["I signed up for a newsletter about off-road shoes, oops."],
  },
  {
    topic: "food",
    inText: true,
    say: (d) => `The cooking class with the Thai chef is on ${d}, finally got a spot.`,
    ask: "When is my Thai cookery course?",
    decoys: ["Thai food is my favourite, I could eat it every day."],
  },
];

/**
 * Multi-hop: a person is introduced with one attribute in one session and given a second one,
 * by name only, in another. The question names the first attribute in other words and asks for
 * the second, so it needs both turns.
 */
export interface Attribute {
  topic: Topic;
  values: string[];
  /** The introducing turn: relation and name. */
  introduce: (relation: string, name: string, value: string) => string;
  /** The later turn: the name only. */
  mention: (name: string, value: string) => string;
  /** How the question points at the person through this attribute. */
  who: (value: string) => string;
  /** The question asking for this attribute of the person `who` points at. */
  ask: (who: string) => string;
}

export const ATTRIBUTES: Attribute[] = [
  {
    topic: "travel",
    values: ["Porto", "Ghent", "Tallinn", "Valencia", "Bergen", "Trieste"],
    introduce: (r, n, v) =>
      `My ${r} ${n} finally moved to ${v}, the flat looks tiny in the photos.`,
    mention: (n, v) => `${n} says life in ${v} is great apart from the rent.`,
    who: (v) => `the person who relocated to ${v}`,
    ask: (w) => `Which city does ${w} live in now?`,
  },
  {
    topic: "work",
    values: ["paramedic", "sommelier", "tram driver", "locksmith", "midwife", "surveyor"],
    introduce: (r, n, v) => `My ${r} ${n} got hired as a ${v}, nobody saw that coming.`,
    mention: (n, v) => `${n} is working as a ${v} now and loves the odd hours.`,
    who: (v) => `the one whose new occupation is ${v}`,
    ask: (w) => `What does ${w} do for a living?`,
  },
  {
    topic: "pets",
    values: ["greyhound", "tortoise", "ferret", "border collie", "rabbit", "bearded dragon"],
    introduce: (r, n, v) => `My ${r} ${n} adopted a ${v} from the shelter last month.`,
    mention: (n, v) => `${n}'s ${v} chewed through a phone charger, classic.`,
    who: (v) => `the person who took in a ${v}`,
    ask: (w) => `What animal did ${w} rescue?`,
  },
  {
    topic: "running",
    values: ["bouldering", "woodturning", "birdwatching", "fencing", "calligraphy", "kayaking"],
    introduce: (r, n, v) => `My ${r} ${n} is completely hooked on ${v} these days.`,
    mention: (n, v) => `${n} spent the whole weekend ${v} again, no surprise there.`,
    who: (v) => `the person obsessed with ${v}`,
    ask: (w) => `What pastime has ${w} taken up?`,
  },
  {
    topic: "travel",
    values: ["Volvo estate", "camper van", "Vespa", "cargo bike", "Fiat Panda", "Land Rover"],
    introduce: (r, n, v) =>
      `My ${r} ${n} bought a second-hand ${v} and drove it round the block twice.`,
    mention: (n, v) => `${n} offered to pick us up in the ${v} next time.`,
    who: (v) => `the person who purchased a used ${v}`,
    ask: (w) => `What vehicle did ${w} get?`,
  },
  {
    topic: "family",
    values: ["Dubrovnik", "Sintra", "Lake Como", "Edinburgh", "Hvar", "Mallorca"],
    introduce: (r, n, v) => `My ${r} ${n} is getting married in ${v} next June.`,
    mention: (n, v) => `${n} sent the save-the-date, the ceremony is in ${v}.`,
    who: (v) => `the person having their wedding in ${v}`,
    ask: (w) => `Where is ${w} holding the wedding?`,
  },
  {
    topic: "work",
    values: [
      "marine biology",
      "Korean",
      "landscape architecture",
      "viticulture",
      "forensic accounting",
      "art history",
    ],
    introduce: (r, n, v) => `My ${r} ${n} went back to university to study ${v}.`,
    mention: (n, v) => `${n} has exams in ${v} next week and is panicking.`,
    who: (v) => `the person who returned to uni for ${v}`,
    ask: (w) => `What subject is ${w} studying?`,
  },
  {
    topic: "health",
    values: ["shellfish", "hazelnuts", "sesame", "penicillin", "kiwi", "latex"],
    introduce: (r, n, v) => `My ${r} ${n} found out the hard way about being allergic to ${v}.`,
    mention: (n, v) => `${n} has to carry an EpiPen now because of the ${v} thing.`,
    who: (v) => `the person with the ${v} allergy`,
    ask: (w) => `What is ${w} allergic to?`,
  },
];

/** Gender-neutral, so any name fits. */
export const RELATIONS = [
  "cousin",
  "neighbour",
  "colleague",
  "old roommate",
  "friend from climbing",
  "school friend",
  "yoga teacher",
  "best friend",
  "former boss",
  "teammate",
  "flatmate",
  "childhood friend",
  "bandmate",
  "running buddy",
  "old classmate",
  "book club friend",
];

export const NAMES = [
  "Jonas",
  "Priya",
  "Mateo",
  "Hanna",
  "Felix",
  "Zara",
  "Oskar",
  "Leila",
  "Bruno",
  "Ingrid",
  "Tariq",
  "Elena",
  "Milo",
  "Sofia",
  "Anton",
  "Nadia",
  "Rafael",
  "Greta",
  "Idris",
  "Clara",
  "Viktor",
  "Amara",
  "Lukas",
  "Freya",
];
